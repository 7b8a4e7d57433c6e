package integration

import "testing"

func TestSaidOnce(t *testing.T) {
	s := newSaidOnce()
	if !s.first("wl-1", ReasonStartRefused) || s.first("wl-1", ReasonStartRefused) {
		t.Error("the same refusal of the same Workload was not said exactly once")
	}
	if !s.first("wl-1", ReasonNoMultiKueueCheck) || !s.first("wl-2", ReasonStartRefused) {
		t.Error("another reason, or another Workload, was taken as said")
	}
	if !s.first("", ReasonStartRefused) || !s.first("", ReasonStartRefused) {
		t.Error("without a Workload to remember, a refusal must be said every time")
	}
}
