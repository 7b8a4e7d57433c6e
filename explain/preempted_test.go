package explain

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
)

// A job waiting after a preemption is told by whom, and with Kueue's
// PriorityBoost the effective priorities compared: Kueue's own word.
func TestAPreemptedJobIsToldWhoPreemptedIt(t *testing.T) {
	said := "Preempted to accommodate a workload (UID: u1, JobUID: j1) due to prioritization in the ClusterQueue; preemptor effective priority: 10000 (base: 10000, boost: 0); preemptee effective priority: 300 (base: 100, boost: 200)"
	wl := &kueue.Workload{}
	if got := preemptedBy(wl); got != "" {
		t.Errorf("never preempted: %q", got)
	}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadPreempted, Status: metav1.ConditionTrue, Reason: "InClusterQueue", Message: said}}
	if got := preemptedBy(wl); got != said {
		t.Errorf("preempted: %q, want Kueue's message", got)
	}
	wl.Status.Conditions[0].Status = metav1.ConditionFalse // admitted again
	if got := preemptedBy(wl); got != "" {
		t.Errorf("admitted again: %q", got)
	}
	var out strings.Builder
	if err := (&Explanation{Job: "ns/j", State: lifecycle.Queued, PreemptedBy: said, Verdict: "v"}).WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "preemptee effective priority: 300") {
		t.Errorf("the text does not say it:\n%s", out.String())
	}
}
