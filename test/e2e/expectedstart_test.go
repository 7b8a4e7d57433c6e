package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/overview"
)

// A queue of one 8-GPU node: a job waiting behind a running one whose end
// nothing tells is "unknown", naming it; once a job of the same runtime
// has finished, the next one waiting is expected to start when the
// running one has run as long, and list and explain say the same.
func TestTheExpectedStartComesFromWhatTellsTheRunningJobsEnd(t *testing.T) {
	ns := namespace(t)
	pool := gpuPool(ns, "gpu", 8)
	nodesOf(t, ns, pool, 1, 8)
	lq := queue(t, ns, ns, pool)
	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(25 * time.Second)}))
	plugin := kubectlPlugin(t)
	expected := func(job string) (*forecast.ExpectedStart, *forecast.ExpectedStart) {
		t.Helper()
		out, err := plugin("list", "-n", ns, "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var rows struct{ Items []overview.Row }
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("list -o json: %v\n%s", err, out)
		}
		var listed *forecast.ExpectedStart
		for _, r := range rows.Items {
			if r.Name == job {
				listed = r.ExpectedStart
			}
		}
		if out, err = plugin("explain", job, "-n", ns, "-o", "json"); err != nil {
			t.Fatal(err)
		}
		var ex explain.Explanation
		if err := json.Unmarshal([]byte(out), &ex); err != nil {
			t.Fatalf("explain -o json: %v\n%s", err, out)
		}
		return listed, ex.ExpectedStart
	}

	first, second := fixtures.TrainJob(ns, "first", "torch", lq), fixtures.TrainJob(ns, "second", "torch", lq)
	create(t, first)
	fixtures.WaitRunning(t, ctx, k8s, first)
	create(t, second)
	fixtures.WaitWorkload(t, ctx, k8s, second)
	listed, explained := expected("second")
	for who, e := range map[string]*forecast.ExpectedStart{"list": listed, "explain": explained} {
		if e == nil || e.At != nil || !strings.Contains(e.Unknown, ns+"/first") {
			t.Errorf("%s: expected start %+v; want unknown, naming %s/first (nothing tells its end)", who, e, ns)
		}
	}

	// first finishes (its run is the runtime's history), second runs, a
	// third waits: expected once second has run as long as first did.
	waitComplete(t, first, 3*time.Minute)
	fixtures.WaitRunning(t, ctx, k8s, second)
	third := fixtures.TrainJob(ns, "third", "torch", lq)
	create(t, third)
	fixtures.WaitWorkload(t, ctx, k8s, third)
	listed, explained = expected("third")
	for who, e := range map[string]*forecast.ExpectedStart{"list": listed, "explain": explained} {
		if e == nil || e.At == nil || len(e.After) != 1 || e.After[0].Job != ns+"/second" || e.After[0].From != forecast.FromHistory ||
			*e.InSeconds < 0 || *e.InSeconds > 60 {
			t.Errorf("%s: expected start %+v; want within a minute, once %s/second ends (from its runtime's history)", who, e, ns)
			continue
		}
		t.Logf("%s: third is expected to start %s", who, e.Sentence())
	}
	waitComplete(t, third, 4*time.Minute)
}
