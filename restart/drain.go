package restart

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// DrainAfter is the manager's context: canceled delay after signals is.
// Meanwhile draining is set, so readiness says the pod is going while it
// still answers the webhook calls the API server sends it until the
// endpoint's change reaches it: stopping at the signal failed such calls
// (an EOF), and with failurePolicy Fail the TrainJob create or update with
// them. after is time.After; tests give their own.
func DrainAfter(signals context.Context, delay time.Duration, after func(time.Duration) <-chan time.Time) (context.Context, *atomic.Bool) {
	ctx, cancel := context.WithCancel(context.Background())
	draining := &atomic.Bool{}
	go func() {
		<-signals.Done()
		draining.Store(true)
		if delay > 0 {
			<-after(delay)
		}
		cancel()
	}()
	return ctx, draining
}

// closeWhenDraining makes a webhook's answers close their connection once
// the replica drains. The API server keeps idle connections to a replica
// after its endpoint is gone and sends its next call on one of them; when
// the drain ends and the server closes them, a call sent at that instant
// fails with an EOF (seen: 1 of 152 calls in a mode change,
// `TestModeChangesRestartOneReplicaAtATimeAndNoWebhookCallFails`). Closed
// after each answer while draining, no idle connection is left to race:
// the next call dials again, and reaches the other replica. HTTP/1.1
// only: HTTP/2 has no Connection header (and is off by default).
type closeWhenDraining struct {
	draining *atomic.Bool
}

// wrap is hook, closing its connections while the replica drains.
func (s closeWhenDraining) wrap(hook http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() && r.ProtoMajor == 1 {
			w.Header().Set("Connection", "close")
		}
		hook.ServeHTTP(w, r)
	})
}
