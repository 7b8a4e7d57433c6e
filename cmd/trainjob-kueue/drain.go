package main

import (
	"context"
	"sync/atomic"
	"time"
)

// drainAfter is the manager's context: canceled delay after signals is.
// Meanwhile draining is set, so readiness says the pod is going while it
// still answers the webhook calls the API server sends it until the
// endpoint's change reaches it: stopping at the signal failed such calls
// (an EOF), and with failurePolicy Fail the TrainJob create or update with
// them. after is time.After; tests give their own.
func drainAfter(signals context.Context, delay time.Duration, after func(time.Duration) <-chan time.Time) (context.Context, *atomic.Bool) {
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
