package main

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// A replica is ready only with its certificate, its webhooks registered,
// what they read synced and its webhook server serving; never while it
// drains.
func TestAReplicaIsReadyOnlyOnceItsWebhooksCanAnswer(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	flag := func(v bool) *atomic.Bool {
		b := &atomic.Bool{}
		b.Store(v)
		return b
	}
	serving := func() error { return nil }
	for name, tc := range map[string]struct {
		r    readiness
		want string
	}{
		"serving":                          {r: readiness{draining: flag(false), certsReady: closed, synced: flag(true), webhook: true, started: serving}},
		"draining":                         {r: readiness{draining: flag(true), certsReady: closed, synced: flag(true), webhook: true, started: serving}, want: "shutting down"},
		"no certificate yet":               {r: readiness{draining: flag(false), certsReady: make(chan struct{}), synced: flag(true), webhook: true, started: serving}, want: "certificate"},
		"caches the webhooks read syncing": {r: readiness{draining: flag(false), certsReady: closed, synced: flag(false), webhook: true, started: serving}, want: "not synced"},
		"webhook server not started":       {r: readiness{draining: flag(false), certsReady: closed, synced: flag(true), webhook: true, started: func() error { return errors.New("webhook server has not been started yet") }}, want: "not been started"},
		"no webhook served":                {r: readiness{draining: flag(false), certsReady: closed, synced: flag(true), started: func() error { return errors.New("never started") }}},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.r.check()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("not ready: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want not ready saying %q", err, tc.want)
			}
		})
	}
}
