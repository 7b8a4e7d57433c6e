package restart

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// At the signal the pod says it is going at once, and the manager stops
// only once the delay is over.
func TestTheManagerDrainsBeforeItStops(t *testing.T) {
	signals, signal := context.WithCancel(context.Background())
	delayed := make(chan time.Time)
	var asked time.Duration
	ctx, draining := DrainAfter(signals, 5*time.Second, func(d time.Duration) <-chan time.Time { asked = d; return delayed })
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
	ctx, draining := DrainAfter(signals, 0, func(time.Duration) <-chan time.Time { panic("no wait without a delay") })
	signal()
	<-ctx.Done()
	if !draining.Load() {
		t.Error("stopped without saying it was going")
	}
}

// While the replica drains, each webhook answer closes its connection, so
// the API server keeps no idle one to this replica for the drain's end to
// cut under a call; before, connections are kept alive.
func TestWebhookAnswersCloseTheirConnectionWhileDraining(t *testing.T) {
	draining := &atomic.Bool{}
	s := NewWebhooks(t.Context(), webhook.NewServer(webhook.Options{})).ForRun(draining)
	s.Register("/validate", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{}")) }))
	srv := httptest.NewServer(s.WebhookMux())
	defer srv.Close()
	call := func() bool {
		resp, err := srv.Client().Post(srv.URL+"/validate", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Close
	}
	if call() {
		t.Errorf("serving: the answer closed its connection, want it kept alive")
	}
	draining.Store(true)
	if !call() {
		t.Errorf("draining: the answer kept its connection alive, want it closed")
	}
}
