package runtimesource

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A runtime's DRA claims reach the PodSets whichever way the Source gets
// the runtime: live, from the PodSet memo on the next reconcile, and from
// Trainer v2.3's runtime snapshot (decoded once, shared by every job
// snapshotted from it).
func TestTheRuntimesDRAClaimsSurviveTheMemoAndTheSnapshot(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "job-uid", Generation: 1}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	rt := &trainer.TrainingRuntime{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainingRuntimeKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "torch"},
		Spec:       trainer.TrainingRuntimeSpec{MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](2)}},
	}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Labels = map[string]string{podsets.AncestorLabel: "trainer"}
	pod := &rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	pod.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: ptr.To("two-gpus")}}
	pod.Containers = []corev1.Container{{Name: "node", Image: "x", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpus"}}}}}
	wantPod, wantContainer := pod.ResourceClaims, pod.Containers[0].Resources.Claims

	check := func(t *testing.T, how string, p Projection) {
		t.Helper()
		if len(p.PodSets) != 1 {
			t.Fatalf("%s: %d PodSets", how, len(p.PodSets))
		}
		spec := p.PodSets[0].Template.Spec
		if diff := cmp.Diff(wantPod, spec.ResourceClaims); diff != "" {
			t.Errorf("%s: pod resourceClaims (-want +got):\n%s", how, diff)
		}
		if diff := cmp.Diff(wantContainer, spec.Containers[0].Resources.Claims); diff != "" {
			t.Errorf("%s: container claims (-want +got):\n%s", how, diff)
		}
	}
	t.Run("live, then memo", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(rt.DeepCopy()).Build()
		s := New(c, c, Options{Shape: shape.PodTemplateOverrides{}})
		for _, how := range []string{"live", "memo"} {
			p, err := s.Project(t.Context(), job)
			if err != nil {
				t.Fatal(err)
			}
			check(t, how, p)
		}
	})
	t.Run("Trainer v2.3's snapshot", func(t *testing.T) {
		// The live runtime lost its claims since: the snapshot's count.
		live := rt.DeepCopy()
		live.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.ResourceClaims = nil
		c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(live, fixtures.RuntimeSnapshot(t, job, rt)).Build()
		s := New(c, c, Options{Shape: shape.RuntimePatches{Release: podsets.Rules{RuntimeSnapshot: true, ResourcesPerNodeMerges: true}}})
		reported := job.DeepCopy()
		reported.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobSuspended, Status: metav1.ConditionTrue}}
		for _, how := range []string{"snapshot", "snapshot, memo"} {
			p, err := s.Project(t.Context(), reported)
			if err != nil {
				t.Fatal(err)
			}
			check(t, how, p)
		}
	})
}
