package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kueue/pkg/podset"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

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
			if got := podGroupName(tc.job, tc.role, tc.last); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	a, b := podGroupName(long, "dataset-initializer", false), podGroupName(long, "model-initializer", false)
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
	if x, y := podGroupName("a", "b", false), podGroupName("a-b", "node", true); x == y {
		t.Errorf("job a's wave b and job a-b share PodGroup %q", x)
	}
	for _, n := range []string{a, b, podGroupName("llm", "dataset-initializer", false)} {
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
	withPodGroupLabels(want, []podGroupPlan{
		{name: "job.dataset-initializer", roles: []string{"dataset-initializer"}},
		{name: "job", roles: []string{"node"}},
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

func TestGangTimeoutConflictIsAWarningEvent(t *testing.T) {
	roles := []podsets.Role{
		{Name: "dataset-initializer", Ancestor: podsets.AncestorDatasetInitializer, Replicas: 1, PodsPerReplica: 1},
		{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1, PodsPerReplica: 2, DependsOn: []podsets.Dependency{{Name: "dataset-initializer", Complete: true}}},
	}
	cases := map[string]struct {
		opts         Options
		coscheduling *trainer.CoschedulingPodGroupPolicySource
		plans        []podGroupPlan
		want         string
	}{
		"Trainer's default 60s against a 30s waitForPodsReady": {
			opts:         Options{WaitForPodsReady: true, PodsReadyTimeouts: quota.PodsReadyTimeouts{Timeout: 30 * time.Second}},
			coscheduling: &trainer.CoschedulingPodGroupPolicySource{},
			want:         "Warning GangTimeoutConflict waitForPodsReady.timeout (30s) is not longer than the gang's schedule timeout (1m0s)",
		},
		"our PodGroups' timeout against the recovery timeout": {
			opts:  Options{WaitForPodsReady: true, PodsReadyTimeouts: quota.PodsReadyTimeouts{Timeout: 10 * time.Minute, Recovery: ptr.To(time.Minute)}},
			plans: []podGroupPlan{{timeout: 2 * time.Minute}},
			want:  "Warning GangTimeoutConflict waitForPodsReady.recoveryTimeout (1m0s)",
		},
		"waitForPodsReady off": {
			coscheduling: &trainer.CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To[int32](600)},
		},
		"Kueue waits longer": {
			opts:         Options{WaitForPodsReady: true, PodsReadyTimeouts: quota.PodsReadyTimeouts{Timeout: 5 * time.Minute}},
			coscheduling: &trainer.CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To[int32](60)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := events.NewFakeRecorder(4)
			job := &TrainJob{deps: &deps{opts: tc.opts, recorder: rec}, roles: roles, coscheduling: tc.coscheduling}
			job.warnGangTimeouts(tc.plans)
			close(rec.Events)
			var got []string
			for e := range rec.Events {
				got = append(got, e)
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("want no event, got %q", got)
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("got %q, want one event starting %q", got, tc.want)
			}
		})
	}
}

func TestOwnGangs(t *testing.T) {
	chained := []podsets.Role{
		{Name: "dataset-initializer", Ancestor: podsets.AncestorDatasetInitializer, Replicas: 1, PodsPerReplica: 1},
		{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1, PodsPerReplica: 2, DependsOn: []podsets.Dependency{{Name: "dataset-initializer", Complete: true}}},
	}
	labelled := []podsets.Role{{Name: "node", Replicas: 1, PodsPerReplica: 2}}
	labelled[0].Template.Labels = map[string]string{PodGroupLabel: "mine"}
	cases := map[string]struct {
		annotations  map[string]string
		shape        shape.Shape
		noCRD        bool
		roles        []podsets.Role
		coscheduling *trainer.CoschedulingPodGroupPolicySource
		want         []string // PodGroup names
		refused      string
	}{
		"opted in: a group per wave": {
			annotations: map[string]string{AnnotationGangScheduling: GangCoscheduling},
			want:        []string{"llm.dataset-initializer", "llm"},
		},
		"not opted in": {},
		"opted out":    {annotations: map[string]string{AnnotationGangScheduling: GangNone}},
		"the runtime has Trainer make one": {
			annotations:  map[string]string{AnnotationGangScheduling: GangCoscheduling},
			coscheduling: &trainer.CoschedulingPodGroupPolicySource{},
		},
		"the user's own PodGroup": {
			annotations: map[string]string{AnnotationGangScheduling: GangCoscheduling},
			roles:       labelled,
		},
		"Trainer v2.0": {
			annotations: map[string]string{AnnotationGangScheduling: GangCoscheduling},
			shape:       shape.PodSpecOverrides{},
			refused:     "Trainer v2.0's spec.podSpecOverrides can't carry",
		},
		"no PodGroup CRD": {
			annotations: map[string]string{AnnotationGangScheduling: GangCoscheduling},
			noCRD:       true,
			refused:     "podgroups.scheduling.x-k8s.io), which is not installed",
		},
		"a timeout that is no number": {
			annotations: map[string]string{AnnotationGangScheduling: GangCoscheduling, AnnotationGangScheduleTimeout: "1m"},
			refused:     "annotation trainjob-kueue.dev/gang-schedule-timeout-seconds",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := events.NewFakeRecorder(4)
			s := tc.shape
			if s == nil {
				s = shape.PodTemplateOverrides{}
			}
			roles := tc.roles
			if roles == nil {
				roles = chained
			}
			job := &TrainJob{deps: &deps{opts: Options{Shape: s, PodGroups: !tc.noCRD}, recorder: rec}, roles: roles, coscheduling: tc.coscheduling}
			job.Name, job.Annotations = "llm", tc.annotations
			plans, err := job.ownGangs(context.Background())
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("want a refusal containing %q, got %v", tc.refused, err)
				}
				if !podset.IsPermanent(err) {
					t.Errorf("a refusal that retries for ever: %v", err)
				}
				if len(rec.Events) != 1 {
					t.Errorf("want one Warning event, got %d", len(rec.Events))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range plans {
				got = append(got, p.name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PodGroups (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGangModeAdminsDecideUsersMayOptIn(t *testing.T) {
	for _, tc := range []struct{ job, clusterQueue, want string }{
		{"", "", ""},
		{GangCoscheduling, "", GangCoscheduling},
		{GangNone, "", GangNone},
		{"", GangCoscheduling, GangCoscheduling},
		// A user's "none" does not opt out of the admin's ClusterQueue.
		{GangNone, GangCoscheduling, GangCoscheduling},
		{GangCoscheduling, GangNone, GangCoscheduling},
	} {
		if got := gangMode(tc.job, tc.clusterQueue); got != tc.want {
			t.Errorf("job %q, ClusterQueue %q: %q, want %q", tc.job, tc.clusterQueue, got, tc.want)
		}
	}
}
