package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// A TrainJob's pod that Kueue's pod webhook took to queue (a default
// LocalQueue) is given back exactly as its Job made it: no managed label,
// finalizer, role hash, or admission and topology gates its Job's template
// does not carry (the topology gate stays when our start put it there: the
// admission placed the job by topology). A pod that only looks like a
// TrainJob's, by its labels or a forged owner, is Kueue's.
func TestATrainJobsPodIsNeverQueuedOnItsOwn(t *testing.T) {
	gates := func(names ...string) []corev1.PodSchedulingGate {
		var out []corev1.PodSchedulingGate
		for _, n := range names {
			out = append(out, corev1.PodSchedulingGate{Name: n})
		}
		return out
	}
	taken := func(f family) *corev1.Pod {
		p := f.pod.DeepCopy()
		p.Labels = map[string]string{"jobset.sigs.k8s.io/jobset-name": "llama", "kueue.x-k8s.io/queue-name": "default", "kueue.x-k8s.io/managed": "true", "app": "x"}
		p.Annotations = map[string]string{"kueue.x-k8s.io/role-hash": "abc", "note": "kept"}
		p.Finalizers = []string{"kueue.x-k8s.io/managed", "other"}
		p.Spec.SchedulingGates = gates("kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology", "user.example/gate")
		return p
	}
	given := func(f family, gateNames ...string) *corev1.Pod {
		p := taken(f)
		p.Labels = map[string]string{"jobset.sigs.k8s.io/jobset-name": "llama", "kueue.x-k8s.io/queue-name": "default", "app": "x"}
		p.Annotations = map[string]string{"note": "kept"}
		p.Finalizers = []string{"other"}
		p.Spec.SchedulingGates = gates(gateNames...)
		return p
	}
	for name, tc := range map[string]struct {
		edit func(*family)
		// notTaken: Kueue's pod webhook did not take the pod (no managed
		// label).
		notTaken bool
		want     func(family, *corev1.Pod) *corev1.Pod
	}{
		"a TrainJob's pod, started without topology": {
			edit: func(f *family) { f.job.Spec.Template.Spec.SchedulingGates = gates("user.example/gate") },
			want: func(f family, _ *corev1.Pod) *corev1.Pod { return given(f, "user.example/gate") },
		},
		"a TrainJob's pod, started with topology": {
			edit: func(f *family) {
				f.job.Spec.Template.Spec.SchedulingGates = gates("user.example/gate", "kueue.x-k8s.io/topology")
			},
			want: func(f family, _ *corev1.Pod) *corev1.Pod {
				return given(f, "kueue.x-k8s.io/topology", "user.example/gate")
			},
		},
		"labelled as a TrainJob's JobSet, no owner": {
			edit: func(f *family) { f.pod.OwnerReferences = nil },
			want: func(_ family, taken *corev1.Pod) *corev1.Pod { return taken },
		},
		"its Job's name, another UID": {
			edit: func(f *family) { f.pod.OwnerReferences[0].UID = "forged" },
			want: func(_ family, taken *corev1.Pod) *corev1.Pod { return taken },
		},
		"a Job of a JobSet of its own": {
			edit: func(f *family) { f.jobSet.OwnerReferences = nil },
			want: func(_ family, taken *corev1.Pod) *corev1.Pod { return taken },
		},
		"not taken by Kueue: nothing to do": {
			notTaken: true,
			want:     func(_ family, taken *corev1.Pod) *corev1.Pod { return taken },
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFamily()
			if tc.edit != nil {
				tc.edit(&f)
			}
			pod := taken(f)
			if tc.notTaken {
				pod.Labels = map[string]string{"jobset.sigs.k8s.io/jobset-name": "llama", "app": "x"}
			}
			want := tc.want(f, pod.DeepCopy())
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(f.objects()...).Build()
			if err := (&Pods{lineage: lineage{cached: c, live: c}}).Default(t.Context(), pod); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, pod); diff != "" {
				t.Errorf("pod (-want +got):\n%s", diff)
			}
		})
	}
}
