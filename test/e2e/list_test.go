package e2e_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/overview"
)

// `kubectl trainjob-kueue list`: a running job, two queued behind it with
// their positions from Kueue's visibility API, and an unqueued one.
func TestListShowsEachJobsQueueStateAsAKubectlPlugin(t *testing.T) {
	ns, lq, _, _ := runningAndPending(t)
	second := fixtures.TrainJob(ns, "pending-2", "torch", lq)
	unqueued := fixtures.TrainJob(ns, "unqueued", "torch", "")
	create(t, second, unqueued)
	fixtures.WaitWorkload(t, ctx, k8s, second)
	kubectl := kubectlPlugin(t)

	want := map[string]struct {
		state    lifecycle.State
		position int32
	}{
		"running": {state: lifecycle.Running, position: -1},
		// Created within one second: Kueue may order the two either way.
		"pending":   {state: lifecycle.Queued, position: -2},
		"pending-2": {state: lifecycle.Queued, position: -2},
		"unqueued":  {state: lifecycle.NotQueued, position: -1},
	}
	eventually(t, time.Minute, "list -o json", func() error {
		out, err := kubectl("list", "-n", ns, "-o", "json")
		if err != nil {
			return err
		}
		var got struct{ Items []overview.Row }
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			return fmt.Errorf("%v:\n%s", err, out)
		}
		if len(got.Items) != len(want) {
			return fmt.Errorf("%d rows, want %d:\n%s", len(got.Items), len(want), out)
		}
		queued := map[int32]bool{}
		for _, r := range got.Items {
			w := want[r.Name]
			position := int32(-1)
			if r.Position != nil {
				position = *r.Position
			}
			if w.position == -2 && position >= 0 {
				queued[position] = true
				position = -2
			}
			if r.State != w.state || position != w.position {
				return fmt.Errorf("%s: %s at %d, want %s at %d", r.Name, r.State, position, w.state, w.position)
			}
			if r.Name == "running" && (r.PodsRunning != 1 || r.Pods != 1 || r.GPUs != 8 || len(r.Flavors) != 1 || r.Flavors[0] != ns+"-gpu") {
				return fmt.Errorf("running: %+v", r)
			}
		}
		if !queued[0] || !queued[1] {
			return fmt.Errorf("the queued jobs' positions %v, want 0 and 1", queued)
		}
		return nil
	})
	out, err := kubectl("list", "-A", "-o", "wide", "-l", "kueue.x-k8s.io/queue-name="+lq)
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Join(strings.Fields(out), " ")
	// Nothing tells when running ends (no time left reported, no finished
	// job of its runtime): the jobs behind it are expected "unknown".
	for _, w := range []string{"NAMESPACE TRAINJOB QUEUE STATE POSITION FLAVORS PODS GPUS WAITED PREEMPTED CLUSTERQUEUE PRIORITY EXPECTED START WHY",
		ns + " running " + lq + " Running - " + ns + "-gpu 1/1 8", ns + " 0 unknown -"} {
		if !strings.Contains(words, w) {
			t.Errorf("list -A -o wide lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "unqueued") {
		t.Errorf("the selector let an unqueued job through:\n%s", out)
	}
}
