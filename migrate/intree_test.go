package migrate

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Kueue's own code computes the way back's PodSets: the live runtime's
// pods, not the ones the job's Workload booked.
func TestInTreePodSetsAreKueuesBuiltInIntegrations(t *testing.T) {
	rt := runtimeOf("team", "torch", 1)
	rt.Spec.Template.Spec.ReplicatedJobs[0].Name = "node"
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.ObjectMeta.Labels = map[string]string{"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
	rt.Spec.MLPolicy = &trainer.MLPolicy{NumNodes: ptr.To[int32](3)}
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: types.UID("u")}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind), APIGroup: ptr.To(trainer.GroupVersion.Group)}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rt).Build()
	inTree, err := InTreePodSets(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := inTree(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int32{}
	for _, ps := range got {
		counts[string(ps.Name)] = ps.Count
	}
	if diff := cmp.Diff(map[string]int32{"node": 3}, counts); diff != "" {
		t.Errorf("PodSets (-want +got):\n%s", diff)
	}
	var wls kueue.WorkloadList
	if err := c.List(t.Context(), &wls); err != nil || len(wls.Items) != 0 {
		t.Errorf("the dry run stored %d Workloads (%v)", len(wls.Items), err)
	}
	// Through the check: the way back stops the running job booked for 2.
	job.Labels = map[string]string{constants.QueueLabel: "lq"}
	job.Spec.Suspend = ptr.To(false)
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "wl", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}}}
	wl.Spec.PodSets = got
	wl.Spec.PodSets[0].Count = 2
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
	c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rt, job, wl).WithStatusSubresource(wl).Build()
	verdicts, err := checkWith(t.Context(), c, Options{Namespace: "team", To: ToInTree, InTree: inTreeOn(c)}, shape.RuntimePatches{}, podsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(verdicts) != 1 || verdicts[0].Decision != Stopped {
		t.Errorf("verdicts %+v, want the running job stopped", verdicts)
	}
}

func inTreeOn(c client.Client) PodSetsOf {
	f, err := InTreePodSets(context.Background(), c)
	if err != nil {
		panic(err)
	}
	return f
}
