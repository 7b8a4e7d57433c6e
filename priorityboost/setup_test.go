package priorityboost

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A ClusterQueue's policy changed: the TrainJobs of the Workloads admitted
// to it or queued in it through a LocalQueue are looked at again, and no
// other.
func TestAPolicyChangeBringsTheJobsOfItsClusterQueue(t *testing.T) {
	owned := func(name, job, kind string) *kueue.Workload {
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: trainjob.GVK.GroupVersion().String(), Kind: kind, Name: job, UID: "u", Controller: ptr.To(true)}}}}
		return wl
	}
	admitted := owned("wl-a", "a", "TrainJob")
	admitted.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	queued := owned("wl-b", "b", "TrainJob")
	queued.Spec.QueueName = "lq"
	elsewhere := owned("wl-c", "c", "TrainJob")
	elsewhere.Status.Admission = &kueue.Admission{ClusterQueue: "other"}
	notAJob := owned("wl-d", "d", "Deployment")
	notAJob.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}}
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(admitted, queued, elsewhere, notAJob, cq, lq,
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "other"}}).WithIndex(&kueue.Workload{}, queueIndex, queueOfWorkload).Build()
	r := New(Options{Client: c})
	var got []string
	for _, req := range r.jobsOf(t.Context(), cq) {
		got = append(got, req.String())
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"ns/a", "ns/b"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Without a policy on any ClusterQueue a job's and a Workload's changes are
// not queued at all, except a Workload's that still carries our boost (it is
// taken back); one ClusterQueue with a policy, usable or not, lets them all
// through.
func TestWithoutAPolicyAnywhereNothingIsQueuedButOurBoostsTakingBack(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"}}
	plain := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl"}}
	boosted := plain.DeepCopy()
	preemptcost.SetOn(boosted, &preemptcost.Boost{Total: 100})
	for _, tc := range []struct {
		name                string
		annotations         map[string]string
		job, plain, boosted bool
	}{
		{name: "no policy", boosted: true},
		{name: "a policy", annotations: map[string]string{names.PreemptionCostAnnotation: policy90}, job: true, plain: true, boosted: true},
		{name: "a policy that can't be used", annotations: map[string]string{names.PreemptionCostAnnotation: "{"}, job: true, plain: true, boosted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(
				&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "plain"}},
				&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: tc.annotations}}).Build()
			r := New(Options{Client: c})
			got := []bool{
				r.whileInForce().Update(event.UpdateEvent{ObjectOld: job, ObjectNew: job}),
				r.whileInForceOrOurs().Update(event.UpdateEvent{ObjectOld: plain, ObjectNew: plain}),
				r.whileInForceOrOurs().Create(event.CreateEvent{Object: boosted}),
			}
			if diff := cmp.Diff([]bool{tc.job, tc.plain, tc.boosted}, got); diff != "" {
				t.Errorf("queued: job, Workload, Workload with our boost (-want +got):\n%s", diff)
			}
		})
	}
}
