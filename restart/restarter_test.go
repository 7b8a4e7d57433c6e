package restart

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainjob-kueue/trainjob-kueue/restartwatch"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// A mode change drains this replica only in its turn: while the other
// replica restarts, this one keeps serving (not draining); once the turn
// is given back, readiness fails at once, the webhook keeps answering for
// the shutdown delay, and the run ends with the mode change as its cause,
// which the process restarts from in place.
func TestAModeChangeDrainsInTurnThenRestartsInProcess(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	turn := func(id string) *restartwatch.Turn {
		return &restartwatch.Turn{Client: c, Namespace: "ns", Identity: id, Every: 5 * time.Millisecond, Now: time.Now}
	}
	other := turn("other")
	if err := other.Take(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	draining := &atomic.Bool{}
	r := &Restarter{turn: turn("me"), draining: draining, shutdownDelay: 30 * time.Millisecond, cancel: cancel}
	reason := errors.New("Kueue's configuration turns its built-in integration off")
	r.Stop(ctx, reason)
	r.Stop(ctx, errors.New("a second watch: ignored"))
	time.Sleep(50 * time.Millisecond)
	if draining.Load() || ctx.Err() != nil {
		t.Fatal("drained while the other replica held the turn: both replicas would stop serving at once")
	}
	gaveAt := time.Now()
	if err := other.Give(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	if !draining.Load() {
		t.Error("stopped without failing readiness first")
	}
	if waited := time.Since(gaveAt); waited < 30*time.Millisecond {
		t.Errorf("stopped %v after its turn came, before the shutdown delay", waited)
	}
	err := context.Cause(ctx)
	if !errors.Is(err, reason) {
		t.Errorf("the run ended with %v, want the mode change", err)
	}
	signals := context.Background()
	if !InProcess(err, signals) {
		t.Error("a mode change does not restart in process: the kubelet would count an exit as a crash")
	}
	stopped, stop := context.WithCancel(context.Background())
	stop()
	if InProcess(err, stopped) {
		t.Error("restarted although a signal asked the process to stop")
	}
	if InProcess(errors.New("a real failure"), signals) {
		t.Error("restarted on a failure: it must exit with it")
	}
}

// A replica alone (no other answered the roll call lately) does not drain
// for a mode change: draining would leave the webhook Service with no
// ready endpoint, and its webhook server answers through the restart.
// With another ready, it drains as before.
func TestAReplicaAloneRestartsWithoutDraining(t *testing.T) {
	for name, otherAnswered := range map[string]bool{"alone": false, "another ready": true} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
			roll := func(id string) *restartwatch.RollCall {
				return &restartwatch.RollCall{Client: c, Namespace: "ns", Identity: id, Now: time.Now}
			}
			if otherAnswered {
				if err := roll("other").Answer(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancelCause(t.Context())
			draining := &atomic.Bool{}
			// Alone, a shutdown delay of an hour must not be waited out
			// (the run stops at once); with another ready it is, briefly.
			delay := time.Hour
			if otherAnswered {
				delay = 30 * time.Millisecond
			}
			r := &Restarter{turn: &restartwatch.Turn{Client: c, Namespace: "ns", Identity: "me", Every: time.Millisecond, Now: time.Now},
				rollCall: roll("me"), draining: draining, shutdownDelay: delay, cancel: cancel}
			go r.Stop(ctx, errors.New("mode change"))
			select {
			case <-ctx.Done():
			case <-time.After(time.Minute):
				t.Fatalf("the run did not stop within a minute (shutdown delay %v): alone, it waits out the delay while nobody else takes the calls", delay)
			}
			if draining.Load() != otherAnswered {
				t.Errorf("drained: %v, want %v", draining.Load(), otherAnswered)
			}
		})
	}
}
