package loadharness

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestActiveCountsTheClusterQueuesKueueSaysAreActive(t *testing.T) {
	cq := func(conds ...metav1.Condition) kueue.ClusterQueue {
		return kueue.ClusterQueue{Status: kueue.ClusterQueueStatus{Conditions: conds}}
	}
	active := metav1.Condition{Type: kueue.ClusterQueueActive, Status: metav1.ConditionTrue}
	inactive := metav1.Condition{Type: kueue.ClusterQueueActive, Status: metav1.ConditionFalse}
	other := metav1.Condition{Type: "Other", Status: metav1.ConditionTrue}
	got := Active([]kueue.ClusterQueue{cq(active), cq(inactive), cq(other), cq(), cq(other, active)})
	if got != 2 {
		t.Errorf("Active = %d, want 2", got)
	}
}
