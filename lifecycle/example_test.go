package lifecycle_test

import (
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// One TrainJob on its way through the queue: its state read from the job
// and its Workload, as every reader (list, explain, the metric, the
// condition on the job) reads it.
func ExampleOf() {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "llm",
		Labels: map[string]string{"kueue.x-k8s.io/queue-name": "research"}}}
	job.Spec.Suspend = ptr.To(true)
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "trainjob-llm-1a2b3"}}
	wl.Spec.QueueName = "research"

	say := func(when string) {
		st := lifecycle.Of(lifecycle.Observed{Job: job, Workload: wl})
		fmt.Printf("%s: %s (%s) in %q\n", when, st.State, st.Reason, st.ClusterQueue)
	}
	say("created")
	apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse,
		Reason: "Pending", Message: "couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor a100"})
	say("waiting for quota")
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "gpus"}
	apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved"})
	apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted"})
	say("admitted, not started yet")
	job.Spec.Suspend = ptr.To(false)
	say("started")
	// Output:
	// created: Queued (Pending) in ""
	// waiting for quota: Queued (Pending) in ""
	// admitted, not started yet: Admitted (Admitted) in "gpus"
	// started: Running (Started) in "gpus"
}
