package main

import (
	"context"
	"testing"
	"time"
)

// At the signal the pod says it is going at once, and the manager stops
// only once the delay is over.
func TestTheManagerDrainsBeforeItStops(t *testing.T) {
	signals, signal := context.WithCancel(context.Background())
	delayed := make(chan time.Time)
	var asked time.Duration
	ctx, draining := drainAfter(signals, 5*time.Second, func(d time.Duration) <-chan time.Time { asked = d; return delayed })
	if draining.Load() || ctx.Err() != nil {
		t.Fatal("draining or stopped before any signal")
	}
	signal()
	for !draining.Load() {
		time.Sleep(time.Millisecond)
	}
	select {
	case <-ctx.Done():
		t.Fatal("stopped before the delay was over")
	case <-time.After(50 * time.Millisecond):
	}
	close(delayed)
	<-ctx.Done()
	if asked != 5*time.Second {
		t.Errorf("waited %v, want the delay given", asked)
	}
}

func TestWithoutADelayTheManagerStopsAtTheSignal(t *testing.T) {
	signals, signal := context.WithCancel(context.Background())
	ctx, draining := drainAfter(signals, 0, func(time.Duration) <-chan time.Time { panic("no wait without a delay") })
	signal()
	<-ctx.Done()
	if !draining.Load() {
		t.Error("stopped without saying it was going")
	}
}
