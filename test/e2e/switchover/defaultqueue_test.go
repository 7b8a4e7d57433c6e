package switchover_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// watchQueuedOnce checks, until stop, that every job of namespace ns (a
// LocalQueue named default, fixtures.NamespaceWithDefaultQueue) stays
// queued once, as its TrainJob, while the integrations hand over: never a
// Workload for its JobSet (Kueue's JobSet integration is on in this
// suite's cluster on Kueue v0.17+) or its pods. A read that fails is
// retried at the next poll.
func watchQueuedOnce(ns string, stop <-chan struct{}) error {
	for {
		select {
		case <-stop:
			return nil
		case <-time.After(poll.Interval):
		}
		if twice, err := fixtures.QueuedOnce(ctx, k8s, ns); err == nil && len(twice) > 0 {
			return errors.Join(twice...)
		}
	}
}

// createUnlabelledThroughout creates an unlabelled TrainJob in namespace
// ns (NamespaceWithDefaultQueue: its LocalQueue named default queues it,
// its runtime "short" runs 3 s on the namespace's one node) every five
// seconds until stop, six at most (they run one after another), and
// returns the names the API server took: the jobs whose JobSets and pods
// the children webhooks meet while the two integrations hand over.
func createUnlabelledThroughout(t *testing.T, ns string, stop <-chan struct{}) []string {
	var names []string
	for i := 0; len(names) < 6; i++ {
		select {
		case <-stop:
			return names
		case <-time.After(5 * time.Second):
		}
		tj := fixtures.TrainJob(ns, fmt.Sprintf("unlabelled-%d", i), "short", "")
		if err := k8s.Create(ctx, tj); err != nil {
			t.Logf("creating %s during the switch: %v", tj.Name, err)
			continue
		}
		names = append(names, tj.Name)
	}
	<-stop
	return names
}

// ranQueuedOnce: each job of names in namespace ns was given the default
// queue and completed, and nothing there was queued twice meanwhile.
func ranQueuedOnce(t *testing.T, ns string, names []string) {
	t.Helper()
	if len(names) == 0 {
		t.Fatalf("no job was created in namespace %s during the switch", ns)
	}
	fixtures.WaitRanQueuedOnce(t, ctx, k8s, 3*time.Minute, ns, names...)
}
