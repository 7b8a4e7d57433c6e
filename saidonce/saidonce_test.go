package saidonce

import "testing"

func TestSaidOnce(t *testing.T) {
	s := New()
	if !s.First("wl-1", "StartRefused") || s.First("wl-1", "StartRefused") {
		t.Error("the same refusal of the same Workload was not said exactly once")
	}
	if !s.First("wl-1", "NoMultiKueueCheck") || !s.First("wl-2", "StartRefused") {
		t.Error("another reason, or another Workload, was taken as said")
	}
	if !s.First("", "StartRefused") || !s.First("", "StartRefused") {
		t.Error("without a Workload to remember, a refusal must be said every time")
	}
}

func TestSaidRemembersNothing(t *testing.T) {
	m := New()
	if m.Said("a", "x") {
		t.Error("said before anything was")
	}
	if !m.First("a", "x") || !m.Said("a", "x") || m.Said("a", "y") || m.Said("b", "x") {
		t.Error("Said does not tell what First remembered")
	}
}
