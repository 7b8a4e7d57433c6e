package main

import (
	"fmt"
	"testing"
	"time"

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
