package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Each round's figures are kept beside their mean: the spread between
// rounds is the measurement's noise.
func TestEachRoundsFiguresAreKept(t *testing.T) {
	round := func(setup string, kueueCPU, oursCPU float64, verbs int) *result {
		return &result{setup: setup, kueue: usage{cpuSeconds: kueueCPU}, ours: usage{cpuSeconds: oursCPU},
			ourVerbs: map[string]int{"create workloads": verbs}, kueueVerb: map[string]int{"create workloads": verbs * 2}}
	}
	s := summarize(10, []*result{
		round(setupInTree, 50, 0, 30), round(setupOurs, 20, 12, 10),
		round(setupInTree, 40, 0, 40), round(setupOurs, 20, 8, 20),
	})
	want := map[string]*Rounds{
		setupOurs:   {RequestsPerJob: []float64{1, 2}, CPUSeconds: []float64{12, 8}},
		setupInTree: {RequestsPerJob: []float64{6, 8}, CPUSeconds: []float64{30, 20}},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, s.Setups[name].ByRound); diff != "" {
			t.Errorf("%s by round (-want +got):\n%s", name, diff)
		}
	}
	if got := *s.Setups[setupOurs].CPUSeconds; got != 10 {
		t.Errorf("ours' CPU seconds = %v, want the rounds' mean 10", got)
	}
}

// A harness-scale run (-hold) measures created → QuotaReserved, and each
// integration's time to reserve every job against the floor's; a job
// admitted but never reserved-timed does not count, nor does a set-up
// that stalled.
func TestAHoldRunIsMeasuredToTheQuotaReservation(t *testing.T) {
	t0 := time.Unix(1000, 0)
	run := func(setup string, reservedAfter ...time.Duration) *result {
		r := &result{setup: setup, hold: true, jobs: map[string]*times{}}
		for i, d := range reservedAfter {
			r.jobs[fmt.Sprintf("job-%d", i)] = &times{created: t0.Add(time.Duration(i) * time.Second), reserved: t0.Add(time.Duration(i)*time.Second + d)}
		}
		return r
	}
	stalled := run(setupInTree, time.Second)
	stalled.unfinished = map[string]int{"queued, never admitted": 1}
	s := summarize(2, []*result{run(setupFloor, time.Second, time.Second), run(setupOurs, 2*time.Second, time.Second), stalled})
	o := s.Setups[setupOurs]
	if o.AllReservedS == nil || *o.AllReservedS != 2 {
		t.Fatalf("ours reserved all in %v s, want 2 (job 0 at 2 s; job 1 created at 1 s, reserved at 2 s)", o.AllReservedS)
	}
	if o.StreamS == nil || *o.StreamS != 1 {
		t.Errorf("ours' stream %v s, want 1 (job 0 created at 0 s, job 1 at 1 s)", o.StreamS)
	}
	if o.CreatedToReservedMS == nil || o.CreatedToReservedMS.P99 != 2000 {
		t.Errorf("ours created → QuotaReserved %+v, want p99 2000 ms", o.CreatedToReservedMS)
	}
	if r := s.Ratios["all_reserved_vs_floor_"+setupOurs]; r == nil || *r != 1 {
		t.Errorf("ours ÷ floor = %v, want 1 (both reserved all 2 s after the first create)", r)
	}
	if r, ok := s.Ratios["all_reserved_vs_floor_"+setupInTree]; ok {
		t.Errorf("a stalled set-up got a ratio: %v", *r)
	}
	if got := o.ThroughputJobsPerS; got != 1 {
		t.Errorf("reservations per second %v, want 1", got)
	}
}
