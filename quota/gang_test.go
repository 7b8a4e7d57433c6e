package quota_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
)

func after(r podsets.Role, dep string, complete bool) podsets.Role {
	r.DependsOn = append(r.DependsOn, podsets.Dependency{Name: dep, Complete: complete})
	return r
}

// Trainer's runtimes chain their initializers: JobSet before v0.10 takes
// one dependency per job.
func chained() []podsets.Role {
	return []podsets.Role{
		role("dataset-initializer", podsets.AncestorDatasetInitializer, 1, 1, list("cpu", "2")),
		after(role("model-initializer", podsets.AncestorModelInitializer, 1, 1, list("cpu", "1")), "dataset-initializer", true),
		after(role("node", podsets.AncestorTrainer, 1, 4, list("cpu", "1", "nvidia.com/gpu", "8")), "model-initializer", true),
	}
}

func TestWaveGangs(t *testing.T) {
	parallel := []podsets.Role{
		role("dataset-initializer", podsets.AncestorDatasetInitializer, 1, 1, list("cpu", "2")),
		role("model-initializer", podsets.AncestorModelInitializer, 1, 1, list("cpu", "1")),
		after(role("node", podsets.AncestorTrainer, 1, 4, list("cpu", "1", "nvidia.com/gpu", "8")), "dataset-initializer", true),
		role("evaluator", "", 2, 1, list("cpu", "1")),
	}
	parallel[2] = after(parallel[2], "model-initializer", true)
	cases := map[string]struct {
		roles    []podsets.Role
		progress map[string]quota.Progress
		want     []quota.WaveGang
	}{
		"no dependencies: one gang of every pod": {
			roles: []podsets.Role{
				role("launcher", podsets.AncestorTrainer, 1, 1, list("cpu", "1")),
				role("node", "", 1, 3, list("nvidia.com/gpu", "8")),
			},
			want: []quota.WaveGang{{Roles: []string{"launcher", "node"}, Gang: quota.Gang{MinMember: 4, MinResources: list("cpu", "1", "nvidia.com/gpu", "24")}}},
		},
		"chained initializers: a wave each": {
			roles: chained(),
			want: []quota.WaveGang{
				{Roles: []string{"dataset-initializer"}, Gang: quota.Gang{MinMember: 1, MinResources: list("cpu", "2")}},
				{Roles: []string{"model-initializer"}, Gang: quota.Gang{MinMember: 1, MinResources: list("cpu", "1")}},
				{Roles: []string{"node"}, Gang: quota.Gang{MinMember: 4, MinResources: list("cpu", "4", "nvidia.com/gpu", "32")}},
			},
		},
		"parallel initializers, and a role without dependencies starts with them": {
			roles: parallel,
			want: []quota.WaveGang{
				{Roles: []string{"dataset-initializer", "model-initializer", "evaluator"}, Gang: quota.Gang{MinMember: 4, MinResources: list("cpu", "5")}},
				{Roles: []string{"node"}, Gang: quota.Gang{MinMember: 4, MinResources: list("cpu", "4", "nvidia.com/gpu", "32")}},
			},
		},
		// A job re-admitted after it ran: what succeeded is not created
		// again, neither a whole Job nor an Indexed Job's completed indexes.
		"re-admitted: the initializers done, two of four trainer pods succeeded": {
			roles:    chained(),
			progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Succeeded: 1}, "node": {PodsDone: 2}},
			want: []quota.WaveGang{
				{Roles: []string{"dataset-initializer"}, Gang: quota.Gang{MinResources: list()}},
				{Roles: []string{"model-initializer"}, Gang: quota.Gang{MinResources: list()}},
				{Roles: []string{"node"}, Gang: quota.Gang{MinMember: 2, MinResources: list("cpu", "2", "nvidia.com/gpu", "16")}},
			},
		},
		"re-admitted: more pods reported done than the role has counts none below zero": {
			roles:    []podsets.Role{role("worker", "", 1, 2, list("cpu", "1"))},
			progress: map[string]quota.Progress{"worker": {PodsDone: 5}},
			want:     []quota.WaveGang{{Roles: []string{"worker"}, Gang: quota.Gang{MinResources: list()}}},
		},
		"replicas multiply": {
			roles: []podsets.Role{role("worker", "", 3, 2, list("cpu", "1"))},
			want:  []quota.WaveGang{{Roles: []string{"worker"}, Gang: quota.Gang{MinMember: 6, MinResources: list("cpu", "6")}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, quota.WaveGangs(tc.roles, tc.progress), byValue); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

var byValue = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestSharedGangFollowsTheWaveBeingPlaced(t *testing.T) {
	withReady := []podsets.Role{
		role("launcher", podsets.AncestorTrainer, 1, 1, list("cpu", "1")),
		after(role("node", "", 1, 3, list("nvidia.com/gpu", "8")), "launcher", false),
	}
	cases := map[string]struct {
		roles    []podsets.Role
		progress map[string]quota.Progress
		want     quota.Gang
	}{
		"queued: the first initializer alone, not Trainer's 6": {
			roles: chained(),
			want:  quota.Gang{MinMember: 1, MinResources: list("cpu", "2")},
		},
		"the dataset initializer runs: the model initializer's size, counting the running pod": {
			roles:    chained(),
			progress: map[string]quota.Progress{"dataset-initializer": {Ready: 1}},
			want:     quota.Gang{MinMember: 2, MinResources: list("cpu", "3")},
		},
		"the dataset initializer finished": {
			roles:    chained(),
			progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}},
			want:     quota.Gang{MinMember: 1, MinResources: list("cpu", "1")},
		},
		"the model initializer runs: the trainer nodes' size before they exist": {
			roles:    chained(),
			progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Ready: 1}},
			want:     quota.Gang{MinMember: 5, MinResources: list("cpu", "5", "nvidia.com/gpu", "32")},
		},
		"initializers finished: the trainer nodes alone": {
			roles:    chained(),
			progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Succeeded: 1}},
			want:     quota.Gang{MinMember: 4, MinResources: list("cpu", "4", "nvidia.com/gpu", "32")},
		},
		"everything placed: the last wave stays": {
			roles:    chained(),
			progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Succeeded: 1}, "node": {Ready: 1}},
			want:     quota.Gang{MinMember: 4, MinResources: list("cpu", "4", "nvidia.com/gpu", "32")},
		},
		"no dependencies: every pod, as Trainer sizes it": {
			roles: []podsets.Role{role("launcher", podsets.AncestorTrainer, 1, 1, list("cpu", "1")), role("node", "", 1, 3, list("nvidia.com/gpu", "8"))},
			want:  quota.Gang{MinMember: 4, MinResources: list("cpu", "1", "nvidia.com/gpu", "24")},
		},
		// kueue#10487's class: re-admitted after indexes 0 and 1 of the
		// trainer Job succeeded, the Job creates indexes 2 and 3 only.
		"re-admitted after two of four trainer pods succeeded: the two created again": {
			roles:    []podsets.Role{role("node", podsets.AncestorTrainer, 1, 4, list("nvidia.com/gpu", "8"))},
			progress: map[string]quota.Progress{"node": {PodsDone: 2}},
			want:     quota.Gang{MinMember: 2, MinResources: list("nvidia.com/gpu", "16")},
		},
		"re-admitted with initializers done and one trainer pod succeeded": {
			roles:    chained(),
			progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Succeeded: 1}, "node": {PodsDone: 1}},
			want:     quota.Gang{MinMember: 3, MinResources: list("cpu", "3", "nvidia.com/gpu", "24")},
		},
		"workers wait for a ready launcher, which stays a member": {
			roles:    withReady,
			progress: map[string]quota.Progress{"launcher": {Ready: 1}},
			want:     quota.Gang{MinMember: 4, MinResources: list("cpu", "1", "nvidia.com/gpu", "24")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, quota.SharedGang(tc.roles, tc.progress), byValue); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDue(t *testing.T) {
	cases := map[string]struct {
		progress map[string]quota.Progress
		want     bool
	}{
		"nothing runs":                            {want: false},
		"the first initializer runs":              {progress: map[string]quota.Progress{"dataset-initializer": {Ready: 1}}, want: true},
		"the next initializer is due, not yet":    {progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}}, want: false},
		"the next initializer runs":               {progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Ready: 1}}, want: true},
		"the trainer nodes are due":               {progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Succeeded: 1}}, want: false},
		"the trainer nodes run":                   {progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Succeeded: 1}, "node": {Ready: 1}}, want: true},
		"done":                                    {progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Succeeded: 1}, "node": {Succeeded: 1}}, want: true},
		"a Job of the trainer nodes is not ready": {progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Succeeded: 1}, "node": {}}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := quota.Due(chained(), tc.progress); got != tc.want {
				t.Errorf("Due = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestTimeoutConflicts(t *testing.T) {
	cases := map[string]struct {
		schedule time.Duration
		w        quota.PodsReadyTimeouts
		waves    int
		want     []string
	}{
		"no gang timeout":                    {w: quota.PodsReadyTimeouts{Timeout: time.Minute}, waves: 1},
		"waitForPodsReady off":               {schedule: time.Minute, waves: 2},
		"Kueue waits longer than the gang":   {schedule: time.Minute, w: quota.PodsReadyTimeouts{Timeout: 5 * time.Minute, Recovery: ptr.To(2 * time.Minute)}, waves: 2},
		"Kueue evicts first":                 {schedule: 5 * time.Minute, w: quota.PodsReadyTimeouts{Timeout: 5 * time.Minute}, waves: 1, want: []string{"waitForPodsReady.timeout (5m0s)"}},
		"the recovery timeout bounds wave 2": {schedule: time.Minute, w: quota.PodsReadyTimeouts{Timeout: 5 * time.Minute, Recovery: ptr.To(30 * time.Second)}, waves: 2, want: []string{"waitForPodsReady.recoveryTimeout (30s)"}},
		"one wave never recovers":            {schedule: time.Minute, w: quota.PodsReadyTimeouts{Timeout: 5 * time.Minute, Recovery: ptr.To(30 * time.Second)}, waves: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := quota.TimeoutConflicts(tc.schedule, tc.w, tc.waves)
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %d conflicts starting %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("conflict %d: %q, want it to start %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestWaitingNamesTheDueRolesNotYetPlaced(t *testing.T) {
	roles := chained()
	cases := map[string]struct {
		progress map[string]quota.Progress
		want     []string
	}{
		"queued: the first initializer":             {want: []string{"dataset-initializer"}},
		"it runs: nothing due waits":                {progress: map[string]quota.Progress{"dataset-initializer": {Ready: 1}}},
		"initializers done: the trainer nodes wait": {progress: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "model-initializer": {Succeeded: 1}}, want: []string{"node"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, quota.Waiting(roles, tc.progress)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
