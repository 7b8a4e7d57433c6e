package integration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// An AdmissionCheck that comes or goes brings the TrainJobs whose Workloads
// name it, and no other job.
func TestAnAdmissionCheckBringsTheJobsThatNameIt(t *testing.T) {
	workload := func(name, apiVersion, kind, owner string, checks ...string) *kueue.Workload {
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: apiVersion, Kind: kind, Name: owner, UID: types.UID("u-" + owner), Controller: ptr.To(true)}}}}
		for _, c := range checks {
			wl.Status.AdmissionChecks = append(wl.Status.AdmissionChecks, kueue.AdmissionCheckState{Name: kueue.AdmissionCheckReference(c)})
		}
		return wl
	}
	tj := trainer.GroupVersion.String()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		workload("a", tj, trainer.TrainJobKind, "dispatched", "mk"),
		workload("b", tj, trainer.TrainJobKind, "local", "other"),
		workload("c", "batch/v1", "Job", "a-job", "mk"),
	).WithStatusSubresource(&kueue.Workload{}).Build()
	r := &Reconciler{deps: &deps{client: c}}
	got := r.jobsOfAdmissionCheck(t.Context(), &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "mk"}})
	want := []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "dispatched"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
