package gang

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

func TestPodGroupName(t *testing.T) {
	long := strings.Repeat("j", 60)
	cases := map[string]struct {
		job, role string
		last      bool
		want      string
	}{
		"the last wave is the job's, as Trainer names it": {job: "llm", role: "node", last: true, want: "llm"},
		"an earlier wave after its first role":            {job: "llm", role: "dataset-initializer", want: "llm.dataset-initializer"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := PodGroupName(tc.job, tc.role, tc.last); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	a, b := PodGroupName(long, "dataset-initializer", false), PodGroupName(long, "model-initializer", false)
	for _, n := range []string{a, b} {
		if errs := validation.IsValidLabelValue(n); len(errs) > 0 {
			t.Errorf("%q is no label value: %v", n, errs)
		}
	}
	if a == b {
		t.Errorf("two waves of a long-named job share PodGroup %q", a)
	}
	// Job "a"'s wave starting with role "b" and job "a-b" (its last wave)
	// are two PodGroups: each job applies its own with force.
	if x, y := PodGroupName("a", "b", false), PodGroupName("a-b", "node", true); x == y {
		t.Errorf("job a's wave b and job a-b share PodGroup %q", x)
	}
	for _, n := range []string{a, b, PodGroupName("llm", "dataset-initializer", false)} {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("%q is no PodGroup name: %v", n, errs)
		}
		if !strings.Contains(n, ".") {
			t.Errorf("%q, an earlier wave's group, could be a job's own name", n)
		}
	}
}

func TestWithPodGroupLabelsLabelsEachRoleWithItsWave(t *testing.T) {
	kueueLabels := map[string]string{"kueue.x-k8s.io/podset": "node"}
	want := []shape.Injection{{Name: "dataset-initializer"}, {Name: "node", Labels: kueueLabels}}
	WithPodGroupLabels(want, []Plan{
		{Name: "job.dataset-initializer", Roles: []string{"dataset-initializer"}},
		{Name: "job", Roles: []string{"node"}},
	})
	got := map[string]map[string]string{}
	for _, w := range want {
		got[w.Name] = w.Labels
	}
	if diff := cmp.Diff(map[string]map[string]string{
		"dataset-initializer": {PodGroupLabel: "job.dataset-initializer"},
		"node":                {PodGroupLabel: "job", "kueue.x-k8s.io/podset": "node"},
	}, got); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if _, ok := kueueLabels[PodGroupLabel]; ok {
		t.Errorf("Kueue's PodSetInfo labels were written to")
	}
}

func TestTimeoutConflict(t *testing.T) {
	roles := []podsets.Role{
		{Name: "dataset-initializer", Ancestor: podsets.AncestorDatasetInitializer, Replicas: 1, PodsPerReplica: 1},
		{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1, PodsPerReplica: 2, DependsOn: []podsets.Dependency{{Name: "dataset-initializer", Complete: true}}},
	}
	cases := map[string]struct {
		timeouts     quota.PodsReadyTimeouts
		coscheduling *trainer.CoschedulingPodGroupPolicySource
		plans        []Plan
		want         string
	}{
		"Trainer's default 60s against a 30s waitForPodsReady": {
			timeouts:     quota.PodsReadyTimeouts{Timeout: 30 * time.Second},
			coscheduling: &trainer.CoschedulingPodGroupPolicySource{},
			want:         "waitForPodsReady.timeout (30s) is not longer than the gang's schedule timeout (1m0s)",
		},
		"our PodGroups' timeout against the recovery timeout": {
			timeouts: quota.PodsReadyTimeouts{Timeout: 10 * time.Minute, Recovery: ptr.To(time.Minute)},
			plans:    []Plan{{Timeout: 2 * time.Minute}},
			want:     "waitForPodsReady.recoveryTimeout (1m0s)",
		},
		"no gang": {timeouts: quota.PodsReadyTimeouts{Timeout: time.Second}},
		"Kueue waits longer": {
			timeouts:     quota.PodsReadyTimeouts{Timeout: 5 * time.Minute},
			coscheduling: &trainer.CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To[int32](60)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := TimeoutConflict(roles, tc.coscheduling, tc.plans, tc.timeouts)
			if tc.want == "" {
				if got != "" {
					t.Errorf("want no conflict, got %q", got)
				}
				return
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want it to start %q", got, tc.want)
			}
		})
	}
}

func TestPlanFor(t *testing.T) {
	chained := []podsets.Role{
		{Name: "dataset-initializer", Ancestor: podsets.AncestorDatasetInitializer, Replicas: 1, PodsPerReplica: 1},
		{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1, PodsPerReplica: 2, DependsOn: []podsets.Dependency{{Name: "dataset-initializer", Complete: true}}},
	}
	labelled := []podsets.Role{{Name: "node", Replicas: 1, PodsPerReplica: 2}}
	labelled[0].Template.Labels = map[string]string{PodGroupLabel: "mine"}
	cases := map[string]struct {
		setting Setting
		shape   shape.Shape
		noCRD   bool
		noAPI   bool
		// unserved: the cluster lacks the gang's scheduler (the job
		// waits, not refused).
		unserved    string
		roles       []podsets.Role
		trainerGang bool
		progress    map[string]quota.Progress
		want        []string // PodGroup names
		minMember   []int32  // of each, when given
		refused     string
	}{
		"opted in: a group per wave": {
			setting: Setting{Mode: Coscheduling},
			want:    []string{"llm.dataset-initializer", "llm"},
		},
		// kueue#10487's class: re-admitted after the initializer and one
		// of the two trainer pods succeeded, only the other is created.
		"re-admitted after some pods succeeded: groups of the pods created again": {
			setting:   Setting{Mode: Coscheduling},
			progress:  map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "node": {PodsDone: 1}},
			want:      []string{"llm"},
			minMember: []int32{1},
		},
		"re-admitted, nothing succeeded: every pod": {
			setting:   Setting{Mode: Coscheduling},
			progress:  map[string]quota.Progress{},
			want:      []string{"llm.dataset-initializer", "llm"},
			minMember: []int32{1, 2},
		},
		"not opted in": {},
		"opted out":    {setting: Setting{Mode: None}},
		"the runtime has Trainer make one": {
			setting:     Setting{Mode: Coscheduling},
			trainerGang: true,
		},
		"the user's own PodGroup": {
			setting: Setting{Mode: Coscheduling},
			roles:   labelled,
		},
		"Trainer v2.0": {
			setting: Setting{Mode: Coscheduling},
			shape:   shape.PodSpecOverrides{},
			refused: "Trainer's spec.podSpecOverrides can't carry (Trainer v2.0)",
		},
		"no PodGroup CRD": {
			setting:  Setting{Mode: Coscheduling},
			noCRD:    true,
			unserved: "podgroups.scheduling.x-k8s.io), which is not installed",
		},
		"workload-api: a Workload API group per wave and admission": {
			setting:   Setting{Mode: WorkloadAPI},
			want:      []string{"llm.dataset-initializer-abc123", "llm-abc123"},
			minMember: []int32{1, 2},
		},
		"workload-api, re-admitted after some pods succeeded: the pods created again": {
			setting:   Setting{Mode: WorkloadAPI},
			progress:  map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "node": {PodsDone: 1}},
			want:      []string{"llm-abc123"},
			minMember: []int32{1},
		},
		"workload-api, the user's own scheduling group": {
			setting: Setting{Mode: WorkloadAPI},
			roles: func() []podsets.Role {
				r := []podsets.Role{{Name: "node", Replicas: 1, PodsPerReplica: 2}}
				r[0].Template.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To("mine")}
				return r
			}(),
		},
		"workload-api, not served": {
			setting:  Setting{Mode: WorkloadAPI},
			noAPI:    true,
			unserved: "scheduling.k8s.io/v1beta1, which this cluster's API server does not serve",
		},
		"workload-api on Trainer v2.0": {
			setting: Setting{Mode: WorkloadAPI},
			shape:   shape.PodSpecOverrides{},
			refused: "needs the trainjob-kueue.dev/pod-group label on the pods",
		},
		"workload-api needs no PodGroup CRD": {
			setting: Setting{Mode: WorkloadAPI},
			noCRD:   true,
			want:    []string{"llm.dataset-initializer-abc123", "llm-abc123"},
		},
		"a timeout that is no number": {
			setting: Setting{Mode: Coscheduling, Timeout: "1m"},
			refused: "annotation trainjob-kueue.dev/gang-schedule-timeout-seconds",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.shape
			if s == nil {
				s = shape.PodTemplateOverrides{}
			}
			roles := tc.roles
			if roles == nil {
				roles = chained
			}
			plans, refusal, unserved := PlanFor(Request{Job: "llm", Setting: tc.setting, Roles: roles, TrainerGang: tc.trainerGang,
				Capabilities: s.Capabilities(), Gangs: Schedulers{PodGroupCRD: !tc.noCRD, WorkloadAPI: !tc.noAPI}, Admission: "abc123", Progress: tc.progress})
			if tc.unserved != "" || unserved != "" {
				if !strings.Contains(unserved, tc.unserved) || tc.unserved == "" || refusal != "" || plans != nil {
					t.Fatalf("PlanFor = %v, refusal %q, unserved %q; want unserved saying %q alone", plans, refusal, unserved, tc.unserved)
				}
				return
			}
			if tc.refused != "" {
				if !strings.Contains(refusal, tc.refused) {
					t.Fatalf("want a refusal containing %q, got %q", tc.refused, refusal)
				}
				if plans != nil {
					t.Errorf("refused, and planned %v", plans)
				}
				return
			}
			if refusal != "" {
				t.Fatal(refusal)
			}
			var got []string
			for _, p := range plans {
				got = append(got, p.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PodGroups (-want +got):\n%s", diff)
			}
			if tc.minMember != nil {
				var sizes []int32
				for _, p := range plans {
					sizes = append(sizes, p.Gang.MinMember)
				}
				if diff := cmp.Diff(tc.minMember, sizes); diff != "" {
					t.Errorf("minMember (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestModeAdminsDecideUsersMayOptIn(t *testing.T) {
	for _, tc := range []struct{ job, clusterQueue, want string }{
		{"", "", ""},
		{Coscheduling, "", Coscheduling},
		{None, "", None},
		{"", Coscheduling, Coscheduling},
		// A user's "none" does not opt out of the admin's ClusterQueue.
		{None, Coscheduling, Coscheduling},
		{Coscheduling, None, Coscheduling},
	} {
		if got := Mode(tc.job, tc.clusterQueue); got != tc.want {
			t.Errorf("job %q, ClusterQueue %q: %q, want %q", tc.job, tc.clusterQueue, got, tc.want)
		}
	}
}

func TestSettingOf(t *testing.T) {
	cq := func(a map[string]string) *kueue.ClusterQueue {
		return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: a}}
	}
	cases := map[string]struct {
		job      map[string]string
		cq       *kueue.ClusterQueue
		want     Setting
		warnings int
	}{
		"the job's own, no ClusterQueue": {
			job:  map[string]string{names.GangSchedulingAnnotation: Coscheduling, names.GangScheduleTimeoutAnnotation: "30"},
			want: Setting{Mode: Coscheduling, Timeout: "30"},
		},
		"the ClusterQueue's binds, with its timeout": {
			job:  map[string]string{names.GangSchedulingAnnotation: None},
			cq:   cq(map[string]string{names.GangSchedulingAnnotation: Coscheduling, names.GangScheduleTimeoutAnnotation: "90"}),
			want: Setting{Mode: Coscheduling, Timeout: "90"},
		},
		"the job's timeout wins": {
			job:  map[string]string{names.GangScheduleTimeoutAnnotation: "30"},
			cq:   cq(map[string]string{names.GangSchedulingAnnotation: Coscheduling, names.GangScheduleTimeoutAnnotation: "90"}),
			want: Setting{Mode: Coscheduling, Timeout: "30"},
		},
		"the ClusterQueue's unknown values are warned about and ignored": {
			cq:       cq(map[string]string{names.GangSchedulingAnnotation: "volcano", names.GangScheduleTimeoutAnnotation: "soon"}),
			want:     Setting{},
			warnings: 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, warnings := SettingOf(tc.job, tc.cq)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("setting (-want +got):\n%s", diff)
			}
			if len(warnings) != tc.warnings {
				t.Errorf("warnings: %q, want %d", warnings, tc.warnings)
			}
		})
	}
}
