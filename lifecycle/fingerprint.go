package lifecycle

import (
	"fmt"
	"strings"

	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// JobFingerprint is what Of, and the write of our condition, read of a
// TrainJob:
// its queue name, suspension, managedBy, and its conditions' types,
// statuses and reasons (ours with its message, so one Trainer dropped or
// reverted is written again).
func JobFingerprint(job *trainjob.TrainJob) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%v|%s|%s", job.Labels[constants.QueueLabel], ptr.Deref(job.Spec.Suspend, false), ptr.Deref(job.Spec.ManagedBy, ""), job.Labels[constants.PrebuiltWorkloadLabel])
	for _, c := range job.Status.Conditions {
		fmt.Fprintf(&b, "|%s=%s/%s", c.Type, c.Status, c.Reason)
		if c.Type == names.AdmittedCondition {
			b.WriteString("/" + c.Message)
		}
	}
	return b.String()
}

// WorkloadFingerprint is what Of reads of a Workload: its
// activation, our holds (what they name: the runtime, the policy and its
// refusal), a preemption notice, where it is admitted, how often it was preempted (Requeued
// from Queued), and its conditions' types, statuses and reasons (not their
// messages: Kueue rewrites a pending Workload's as the queue moves).
// A change of either that changes what Of says changes the fingerprint
// (TestEveryChangeOfWhatOfSaysChangesAFingerprint): a controller that
// filters its events by them misses no change of state.
func WorkloadFingerprint(wl *kueue.Workload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v|%s|%s|%s|%s|%s|%d", ptr.Deref(wl.Spec.Active, true), annotationOf(wl, names.HeldForRuntimeAnnotation), annotationOf(wl, names.HeldByPolicyAnnotation),
		annotationOf(wl, names.PreemptingAnnotation), ptr.Deref(wl.Status.ClusterName, ""), wl.Spec.QueueName, preemptcost.Preemptions(wl))
	if adm := wl.Status.Admission; adm != nil {
		b.WriteString("|cq=" + string(adm.ClusterQueue))
	}
	for _, c := range wl.Status.Conditions {
		fmt.Fprintf(&b, "|%s=%s/%s", c.Type, c.Status, c.Reason)
	}
	return b.String()
}

// annotationOf is wl's annotation key, quoted, or "-" without one (an
// empty one is one).
func annotationOf(wl *kueue.Workload, key string) string {
	if v, ok := wl.Annotations[key]; ok {
		return fmt.Sprintf("%q", v)
	}
	return "-"
}
