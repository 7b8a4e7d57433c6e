package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Our requests per job count everything our process asks the API server
// for, reads for PodSets included; the in-tree integration's count what it
// does on TrainJobs and Workloads in Kueue's busy process.
func TestOurRequestsCountEveryReadButEventsAndLeases(t *testing.T) {
	at := summarize(2, []*result{{
		setup: setupOurs,
		ourVerbs: map[string]int{
			"create workloads":       2,
			"patch workloads/status": 4,
			"get configmaps":         3,
			"create events":          9,
			"update leases":          7,
		},
	}})
	want := map[string]int{"create workloads": 2, "patch workloads/status": 4, "get configmaps": 3}
	if diff := cmp.Diff(want, at.Setups[setupOurs].RequestsByVerb); diff != "" {
		t.Errorf("requests by verb (-want +got):\n%s", diff)
	}
	if got := *at.Setups[setupOurs].RequestsPerJob; got != 4.5 {
		t.Errorf("requests per job = %v, want 4.5", got)
	}
}

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
