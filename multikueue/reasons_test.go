package multikueue

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// A Workload Kueue is done with is neither held nor released: both sides
// read Kueue's Finished condition, and only its true value.
func TestFinishedIsKueuesFinishedCondition(t *testing.T) {
	wl := &kueue.Workload{}
	if finished(wl) {
		t.Error("no condition: finished")
	}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadFinished, Status: metav1.ConditionFalse}}
	if finished(wl) {
		t.Error("Finished false: finished")
	}
	wl.Status.Conditions[0].Status = metav1.ConditionTrue
	if !finished(wl) {
		t.Error("Finished true: not finished")
	}
}
