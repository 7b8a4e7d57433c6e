package localcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// On a MultiKueue set-up the workers go to ours first and come back last:
// the one mixed state is a manager under Kueue's integration dispatching
// to workers under ours, both ways.
func TestAMultiKueueSetUpSwitchesInTheRunbooksOrder(t *testing.T) {
	workers := []string{"w1", "w2"}
	if diff := cmp.Diff([]string{"w1", "w2", "m"}, switchOrder("m", workers, IntegrationOurs)); diff != "" {
		t.Errorf("to ours (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"m", "w1", "w2"}, switchOrder("m", workers, IntegrationInTree)); diff != "" {
		t.Errorf("to intree (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"w1", "w2"}, workers); diff != "" {
		t.Errorf("the workers' list changed (-want +got):\n%s", diff)
	}
}
