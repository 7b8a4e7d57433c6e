package shape_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

var s = shape.PodTemplateOverrides{}

func user(name, key string) trainjob.PodTemplateOverride {
	return trainjob.PodTemplateOverride{
		TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: name}},
		Spec:       &trainjob.PodTemplateSpecOverride{NodeSelector: map[string]string{key: "user"}},
	}
}

func inTree(name string) trainjob.PodTemplateOverride {
	return trainjob.PodTemplateOverride{
		TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: name}},
		Metadata:   &metav1.ObjectMeta{Labels: map[string]string{names.InTreePodSetLabel: name}},
		Spec:       &trainjob.PodTemplateSpecOverride{NodeSelector: map[string]string{"flavor": "old"}},
	}
}

func job(overrides ...trainjob.PodTemplateOverride) *trainjob.TrainJob {
	return &trainjob.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", ResourceVersion: "7"},
		Spec:       trainjob.Spec{RuntimeRef: trainer.RuntimeRef{Name: "torch"}, PodTemplateOverrides: overrides},
	}
}

var flavorTol = corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

func admission() []shape.Injection {
	return []shape.Injection{
		{
			Name:         "node",
			Labels:       map[string]string{"kueue.x-k8s.io/podset": "node"},
			Annotations:  map[string]string{"kueue.x-k8s.io/workload": "wl"},
			NodeSelector: map[string]string{"pool": "a100"},
			Tolerations:  []corev1.Toleration{flavorTol},
		},
		{Name: "dataset-initializer"},
	}
}

// apply runs ops against job's JSON the way the API server would.
func apply(t *testing.T, j *trainjob.TrainJob, ops []shape.Op) *trainjob.TrainJob {
	t.Helper()
	return applyTo(t, j, ops)
}

func TestInjectThenRestoreGivesBackTheUsersList(t *testing.T) {
	cases := map[string]*trainjob.TrainJob{
		"no overrides":                job(),
		"user entries":                job(user("node", "a"), user("dataset-initializer", "b")),
		"in-tree entries to clean up": job(user("node", "a"), inTree("node"), user("node", "c")),
		"only in-tree entries":        job(inTree("node")),
	}
	for name, before := range cases {
		t.Run(name, func(t *testing.T) {
			injected := apply(t, before, s.Inject(before, admission()))
			if !s.Injected(injected) {
				t.Fatal("nothing injected")
			}
			// Ours come last, after every user entry, so Trainer applies them last.
			n := len(injected.Spec.PodTemplateOverrides)
			last := injected.Spec.PodTemplateOverrides[n-2:]
			for _, o := range last {
				if o.Metadata == nil || o.Metadata.Labels[names.OwnedLabel] != "true" {
					t.Errorf("trailing entry not ours: %+v", o)
				}
			}
			if ops := s.Inject(injected, admission()); ops != nil {
				t.Errorf("second Inject is not a no-op: %v", ops)
			}
			restored := apply(t, injected, s.Restore(injected))
			var want []trainjob.PodTemplateOverride
			for _, o := range before.Spec.PodTemplateOverrides {
				if o.Metadata == nil || o.Metadata.Labels[names.InTreePodSetLabel] == "" {
					want = append(want, o)
				}
			}
			if diff := cmp.Diff(want, restored.Spec.PodTemplateOverrides); diff != "" {
				t.Errorf("restored list (-want +got):\n%s", diff)
			}
			if ops := s.Restore(restored); ops != nil {
				t.Errorf("Restore on a clean job is not a no-op: %v", ops)
			}
		})
	}
}

func TestInjectedEntryCarriesTheWholeAdmission(t *testing.T) {
	got := apply(t, job(), s.Inject(job(), admission()))
	want := trainjob.PodTemplateOverride{
		TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}},
		Metadata: &metav1.ObjectMeta{
			Labels:      map[string]string{"kueue.x-k8s.io/podset": "node", names.OwnedLabel: "true"},
			Annotations: map[string]string{"kueue.x-k8s.io/workload": "wl"},
		},
		Spec: &trainjob.PodTemplateSpecOverride{
			NodeSelector: map[string]string{"pool": "a100"},
			Tolerations:  []corev1.Toleration{flavorTol},
		},
	}
	if diff := cmp.Diff(want, got.Spec.PodTemplateOverrides[0]); diff != "" {
		t.Errorf("injected entry (-want +got):\n%s", diff)
	}
}

func TestInjectReplacesAStaleAdmission(t *testing.T) {
	first := apply(t, job(user("node", "a")), s.Inject(job(user("node", "a")), admission()))
	other := admission()
	other[0].NodeSelector = map[string]string{"pool": "h100"}
	second := apply(t, first, s.Inject(first, other))
	if n := len(second.Spec.PodTemplateOverrides); n != 3 {
		t.Fatalf("want user entry + 2 of ours, got %d", n)
	}
	if got := second.Spec.PodTemplateOverrides[1].Spec.NodeSelector["pool"]; got != "h100" {
		t.Errorf("pool %q, want h100", got)
	}
}

func TestTampered(t *testing.T) {
	ours := apply(t, job(user("node", "a")), s.Inject(job(user("node", "a")), admission()))
	if paths := s.Tampered(nil, ours); len(paths) != 2 {
		t.Errorf("a new job carrying our marker: want 2 forged entries, got %v", paths)
	}
	if paths := s.Tampered(ours, ours); len(paths) != 0 {
		t.Errorf("unchanged entries are not tampered with: %v", paths)
	}
	edited := ours.DeepCopy()
	edited.Spec.PodTemplateOverrides[1].Spec.NodeSelector["pool"] = "mine"
	if paths := s.Tampered(ours, edited); len(paths) != 1 {
		t.Errorf("a user edit of our entry: want 1 path, got %v", paths)
	}
	removed := ours.DeepCopy()
	removed.Spec.PodTemplateOverrides = removed.Spec.PodTemplateOverrides[:2]
	if paths := s.Tampered(ours, removed); len(paths) != 1 || !strings.Contains(paths[0], "removed") {
		t.Errorf("a user removing our entry: want 1 removed path, got %v", paths)
	}
	userEdit := ours.DeepCopy()
	userEdit.Spec.PodTemplateOverrides[0].Spec.NodeSelector["a"] = "changed"
	if paths := s.Tampered(ours, userEdit); len(paths) != 0 {
		t.Errorf("a user edit of their own entry is fine: %v", paths)
	}
	if paths := s.Tampered(ours, apply(t, ours, s.Restore(ours))); len(paths) != 2 {
		t.Errorf("our own restore, seen as anyone else's write: want 2 removed paths, got %v", paths)
	}
}
