package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestProgressStallsOnlyWhenNothingFinishedForTheWholeStall(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	var p progress
	steps := []struct {
		after    time.Duration
		finished int
		want     bool
	}{
		{0, 10, false},
		{4 * time.Minute, 10, false},
		{9 * time.Minute, 11, false}, // moved: the clock starts again
		{18 * time.Minute, 11, false},
		{19 * time.Minute, 11, true},
	}
	for _, s := range steps {
		if got := p.stalled(t0.Add(s.after), s.finished, 10*time.Minute); got != s.want {
			t.Errorf("at +%s with %d finished: stalled = %v, want %v", s.after, s.finished, got, s.want)
		}
	}
	var never progress
	never.stalled(t0, 3, 0)
	if never.stalled(t0.Add(24*time.Hour), 3, 0) {
		t.Error("-stall 0 stalled")
	}
}

// The in-tree integration's wedge at N = 2,000: completed jobs whose
// Workloads stay admitted, and the queue behind them.
func TestUnfinishedStatesSaysWhereEachJobStands(t *testing.T) {
	at := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	jobs := map[string]*times{
		"done":            {created: at, workload: at, admitted: at, unsuspended: at, finished: at},
		"done-holding":    {created: at, workload: at, admitted: at, unsuspended: at, finished: at, holding: true},
		"queued-1":        {created: at, workload: at},
		"queued-2":        {created: at, workload: at},
		"no-workload":     {created: at},
		"admitted":        {created: at, workload: at, admitted: at, holding: true},
		"running-forever": {created: at, workload: at, admitted: at, unsuspended: at, holding: true},
	}
	got := unfinishedStates(jobs)
	want := map[string]int{stateHoldingQuota: 1, stateQueued: 2, stateNoWorkload: 1, stateNotStarted: 1, stateRunning: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := unfinishedCount(got); n != 5 {
		t.Errorf("unfinishedCount = %d, want 5 (a finished job holding quota is finished)", n)
	}
}

// A stalled set-up keeps its figures, gets no ratio, fails the smoke's
// check, and is left out of the sweep's lines.
func TestAStalledSetUpIsReportedNotCompared(t *testing.T) {
	at := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	done := func() *times {
		return &times{created: at, workload: at.Add(time.Millisecond), admitted: at.Add(time.Second), unsuspended: at.Add(2 * time.Second), running: at.Add(3 * time.Second), finished: at.Add(4 * time.Second)}
	}
	verbs := map[string]int{"create workloads": 2, "patch trainjobs": 4}
	results := []*result{
		{setup: setupFloor, jobs: map[string]*times{"a": done(), "b": done()}},
		{setup: setupInTree, jobs: map[string]*times{"a": done(), "b": {created: at, workload: at}},
			kueue: usage{cpuSeconds: 5}, kueueVerb: verbs, unfinished: map[string]int{stateQueued: 1, stateHoldingQuota: 1}},
		{setup: setupOurs, jobs: map[string]*times{"a": done(), "b": done()}, kueue: usage{cpuSeconds: 3}, ours: usage{cpuSeconds: 1}, ourVerbs: verbs},
	}
	s := summarize(2, results)
	if diff := cmp.Diff(map[string]int{stateQueued: 1, stateHoldingQuota: 1}, s.Setups[setupInTree].Unfinished); diff != "" {
		t.Errorf("intree unfinished (-want +got):\n%s", diff)
	}
	if s.Setups[setupInTree].RequestsPerJob == nil {
		t.Error("the stalled set-up's figures were dropped")
	}
	for _, k := range []string{"requests_per_job", "cpu_seconds", "unsuspend_p99"} {
		if r, ok := s.Ratios[k]; ok {
			t.Errorf("ratio %s = %v computed against a stalled set-up", k, r)
		}
	}
	if s.Ratios["throughput_vs_floor"] == nil {
		t.Error("ours ÷ floor, both complete, is missing")
	}
	if err := check(s); err == nil || !strings.Contains(err.Error(), "intree stalled: 1 finished, Workload still admitted, 1 queued, never admitted") {
		t.Errorf("check: %v, want intree's stall named", err)
	}
	p := sweepPoint(s)
	if it := p.Setups[setupInTree]; it.RequestsPerJob != nil || it.CPUMillisPerJob != nil || len(it.Unfinished) == 0 {
		t.Errorf("sweep point of the stalled set-up: %+v, want no figures and where its jobs stood", it)
	}
	if p.Setups[setupOurs].RequestsPerJob == nil {
		t.Error("sweep point of the complete set-up lost its figures")
	}
}
