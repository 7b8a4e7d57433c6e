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
