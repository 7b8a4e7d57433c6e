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

// While a run restarted for a mode change syncs, the probe passes on the
// earlier run's webhooks answering (a lone replica stays in its Service);
// the turn's check does not; a first run, a draining one or one without
// its certificate is unready either way.
func TestTheProbePassesOnTheEarlierRunsWebhooksWhileARestartSyncs(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	flag := func(v bool) *atomic.Bool {
		b := &atomic.Bool{}
		b.Store(v)
		return b
	}
	serving := func() error { return nil }
	yes, no := func() bool { return true }, func() bool { return false }
	for name, tc := range map[string]struct {
		r                readiness
		probe, turnCheck bool // ready by each
	}{
		"a restarted run syncing, the earlier run's webhooks answering": {r: readiness{draining: flag(false), certsReady: closed, synced: flag(false), webhook: true, started: serving, answering: yes}, probe: true},
		"a first run syncing: no run answers yet":                       {r: readiness{draining: flag(false), certsReady: closed, synced: flag(false), webhook: true, started: serving, answering: no}},
		"draining":               {r: readiness{draining: flag(true), certsReady: closed, synced: flag(false), webhook: true, started: serving, answering: yes}},
		"no certificate":         {r: readiness{draining: flag(false), certsReady: make(chan struct{}), synced: flag(false), webhook: true, started: serving, answering: yes}},
		"the server not started": {r: readiness{draining: flag(false), certsReady: closed, synced: flag(false), webhook: true, started: func() error { return errors.New("not started") }, answering: yes}},
		"synced: ready by both":  {r: readiness{draining: flag(false), certsReady: closed, synced: flag(true), webhook: true, started: serving, answering: yes}, probe: true, turnCheck: true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tc.r.probe() == nil; got != tc.probe {
				t.Errorf("probe ready: %v, want %v (%v)", got, tc.probe, tc.r.probe())
			}
			if got := tc.r.check() == nil; got != tc.turnCheck {
				t.Errorf("turn check ready: %v, want %v", got, tc.turnCheck)
			}
		})
	}
}
