package switchover_test

import (
	"errors"
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
