package shape_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

var ps = shape.PodSpecOverrides{}

func v20(annotations map[string]string, entries ...trainjob.PodSpecOverride) *trainjob.TrainJob {
	return &trainjob.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Name: "j", ResourceVersion: "5", Annotations: annotations},
		Spec:       trainjob.Spec{RuntimeRef: trainer.RuntimeRef{Name: "torch"}, PodSpecOverrides: entries},
	}
}

func TestPodSpecOverridesMergesIntoTheUsersEntry(t *testing.T) {
	userTol := corev1.Toleration{Key: "user", Operator: corev1.TolerationOpExists}
	user := trainjob.PodSpecOverride{
		TargetJobs:      []trainjob.TargetJob{{Name: "node"}},
		NodeSelector:    map[string]string{"disk": "ssd"},
		Tolerations:     []corev1.Toleration{userTol},
		SchedulingGates: []corev1.PodSchedulingGate{{Name: "user-gate"}},
	}
	j := v20(map[string]string{"team": "nlp"}, user)
	want := admission()
	want[0].Tolerations = []corev1.Toleration{userTol, flavorTol} // the complete list
	want[0].SchedulingGates = []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/topology"}}
	got := applyTo(t, j, ps.Inject(j, want))

	if n := len(got.Spec.PodSpecOverrides); n != 2 {
		t.Fatalf("want the user's entry (merged) and a new one for the initializer, got %d", n)
	}
	merged := got.Spec.PodSpecOverrides[0]
	if diff := cmp.Diff(map[string]string{"disk": "ssd", "pool": "a100"}, merged.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.Toleration{userTol, flavorTol}, merged.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.PodSchedulingGate{{Name: "user-gate"}, {Name: "kueue.x-k8s.io/topology"}}, merged.SchedulingGates); diff != "" {
		t.Errorf("schedulingGates (-want +got):\n%s", diff)
	}
	if got.Annotations["team"] != "nlp" || got.Annotations[names.InjectedAnnotation] == "" {
		t.Errorf("annotations %v", got.Annotations)
	}
	// PodSets see only the user's entry.
	tmpl := corev1.PodTemplateSpec{}
	if err := ps.ApplyUserOverrides(got, "node", &tmpl); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"disk": "ssd"}, tmpl.Spec.NodeSelector); diff != "" {
		t.Errorf("PodSets would see our keys (-want +got):\n%s", diff)
	}
	if ops := ps.Inject(got, want); ops != nil {
		t.Errorf("same admission again: %v", ops)
	}
	// Another admission replaces ours, still keeping the user's.
	other := admission()
	other[0].NodeSelector = map[string]string{"pool": "h100"}
	again := applyTo(t, got, ps.Inject(got, other))
	if sel := again.Spec.PodSpecOverrides[0].NodeSelector; sel["pool"] != "h100" || sel["disk"] != "ssd" {
		t.Errorf("re-injection: %v", sel)
	}
	restored := applyTo(t, again, ps.Restore(again))
	if diff := cmp.Diff(v20(map[string]string{"team": "nlp"}, user).Spec, restored.Spec); diff != "" {
		t.Errorf("restored spec (-want +got):\n%s", diff)
	}
	if _, left := restored.Annotations[names.InjectedAnnotation]; left || restored.Annotations["team"] != "nlp" {
		t.Errorf("restored annotations %v", restored.Annotations)
	}
}

func TestPodSpecOverridesTampered(t *testing.T) {
	j := v20(nil)
	ours := applyTo(t, j, ps.Inject(j, admission()))
	if p := ps.Tampered(nil, ours); len(p) != 1 {
		t.Errorf("a new job with our record: %v", p)
	}
	if p := ps.Tampered(ours, j); len(p) != 1 {
		t.Errorf("our record removed: %v", p)
	}
	if p := ps.Tampered(ours, ours); len(p) != 0 {
		t.Errorf("unchanged: %v", p)
	}
}

func TestSharedEntryConflict(t *testing.T) {
	job := &trainjob.TrainJob{Spec: trainjob.Spec{PodSpecOverrides: []trainjob.PodSpecOverride{
		{TargetJobs: []trainjob.TargetJob{{Name: "launcher"}}},
		{TargetJobs: []trainjob.TargetJob{{Name: "node"}, {Name: "eval"}}, NodeSelector: map[string]string{"disk": "ssd"}},
	}}}
	a100 := shape.Injection{NodeSelector: map[string]string{"pool": "a100"}}
	h100 := shape.Injection{NodeSelector: map[string]string{"pool": "h100"}}
	named := func(name string, inj shape.Injection) shape.Injection { inj.Name = name; return inj }
	cases := map[string]struct {
		want  []shape.Injection
		path  string
		roles []string
	}{
		"one flavor for the shared entry's roles": {want: []shape.Injection{named("launcher", h100), named("node", a100), named("eval", a100)}},
		"two flavors under one entry": {
			want:  []shape.Injection{named("launcher", a100), named("node", a100), named("eval", h100)},
			path:  "spec.podSpecOverrides[1]",
			roles: []string{"node", "eval"},
		},
		"a role the admission does not name": {want: []shape.Injection{named("node", a100)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path, roles := shape.SharedEntryConflict(job, tc.want)
			if path != tc.path || !slices.Equal(roles, tc.roles) && tc.path != "" {
				t.Errorf("got %q %v, want %q %v", path, roles, tc.path, tc.roles)
			}
		})
	}
}
