package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
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

// The in-tree integration's Workload status writes: the job framework's own
// field managers counted exactly, the shared one (kueue-admission, also
// the scheduler's) only beyond what Kueue wrote under it in the ours
// set-up. A scheduler that wrote more in the ours set-up (its Workloads
// waited longer) must not hide the job framework's writes.
func TestInTreeStatusWritesCountTheJobFrameworksExactly(t *testing.T) {
	for _, tc := range []struct {
		name         string
		intree, ours map[string]int
		want         int
	}{
		{
			name:   "the scheduler wrote more in the ours set-up",
			intree: map[string]int{"kueue-job-controller-PodsReady": 10, "kueue-reclaimable-pods": 3, "kueue-admission": 25},
			ours:   map[string]int{"kueue-admission": 30},
			want:   13,
		},
		{
			name:   "Finished beyond the scheduler's admissions",
			intree: map[string]int{"kueue-job-controller-PodsReady": 10, "kueue-admission": 25},
			ours:   map[string]int{"kueue-admission": 20},
			want:   15,
		},
		{
			name:   "every shared manager on its own",
			intree: map[string]int{"kueue-admission": 5, "(none)": 4},
			ours:   map[string]int{"kueue-admission": 1, "(none)": 6},
			want:   4,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := inTreeStatusWrites(tc.intree, tc.ours); got != tc.want {
				t.Errorf("inTreeStatusWrites = %d, want %d", got, tc.want)
			}
		})
	}
}

// Workload status writes are told apart by their field manager; refused
// requests count for nothing.
func TestStatusWritesAreCountedByFieldManager(t *testing.T) {
	ev := func(verb, res, sub, uri string, code int) localcluster.AuditEvent {
		e := localcluster.AuditEvent{Stage: "ResponseComplete", Verb: verb, RequestURI: uri}
		e.ObjectRef = &struct{ Resource, Namespace, Name, Subresource string }{Resource: res, Subresource: sub}
		e.ResponseStatus = &struct{ Code int }{Code: code}
		return e
	}
	const wl = "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads/w/status"
	got := countRequests([]localcluster.AuditEvent{
		ev("patch", "workloads", "status", wl+"?fieldManager=kueue-job-controller-PodsReady&force=true", 200),
		ev("patch", "workloads", "status", wl+"?force=true&fieldManager=kueue-job-controller-PodsReady", 200),
		ev("patch", "workloads", "status", wl+"?fieldManager=kueue-admission", 200),
		ev("patch", "workloads", "status", wl+"?fieldManager=kueue-admission", 409),
		ev("update", "workloads", "status", wl, 200),
		ev("patch", "workloads", "", "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads/w?fieldManager=x", 200),
		ev("create", "workloads", "", "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads?dryRun=All", 201),
	})
	want := map[string]int{"kueue-job-controller-PodsReady": 2, "kueue-admission": 1, "(none)": 1}
	if diff := cmp.Diff(want, got.statusByOwner); diff != "" {
		t.Errorf("status writes by owner (-want +got):\n%s", diff)
	}
	wantVerbs := map[string]int{"patch workloads/status": 3, "update workloads/status": 1, "patch workloads": 1, "create workloads": 1}
	if diff := cmp.Diff(wantVerbs, got.byVerb); diff != "" {
		t.Errorf("by verb (-want +got):\n%s", diff)
	}
	if got.dryRuns != 1 {
		t.Errorf("dry runs = %d, want 1", got.dryRuns)
	}
}
