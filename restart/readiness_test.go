package restart

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
		r    Readiness
		want string
	}{
		"serving":                          {r: Readiness{Draining: flag(false), CertsReady: closed, Synced: flag(true), Webhook: true, Started: serving}},
		"draining":                         {r: Readiness{Draining: flag(true), CertsReady: closed, Synced: flag(true), Webhook: true, Started: serving}, want: "shutting down"},
		"no certificate yet":               {r: Readiness{Draining: flag(false), CertsReady: make(chan struct{}), Synced: flag(true), Webhook: true, Started: serving}, want: "certificate"},
		"caches the webhooks read syncing": {r: Readiness{Draining: flag(false), CertsReady: closed, Synced: flag(false), Webhook: true, Started: serving}, want: "not synced"},
		"webhook server not started":       {r: Readiness{Draining: flag(false), CertsReady: closed, Synced: flag(true), Webhook: true, Started: func() error { return errors.New("webhook server has not been started yet") }}, want: "not been started"},
		"no webhook served":                {r: Readiness{Draining: flag(false), CertsReady: closed, Synced: flag(true), Started: func() error { return errors.New("never started") }}},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.r.Check()
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
		r                Readiness
		probe, turnCheck bool // ready by each
	}{
		"a restarted run syncing, the earlier run's webhooks answering": {r: Readiness{Draining: flag(false), CertsReady: closed, Synced: flag(false), Webhook: true, Started: serving, Answering: yes}, probe: true},
		"a first run syncing: no run answers yet":                       {r: Readiness{Draining: flag(false), CertsReady: closed, Synced: flag(false), Webhook: true, Started: serving, Answering: no}},
		"draining":               {r: Readiness{Draining: flag(true), CertsReady: closed, Synced: flag(false), Webhook: true, Started: serving, Answering: yes}},
		"no certificate":         {r: Readiness{Draining: flag(false), CertsReady: make(chan struct{}), Synced: flag(false), Webhook: true, Started: serving, Answering: yes}},
		"the server not started": {r: Readiness{Draining: flag(false), CertsReady: closed, Synced: flag(false), Webhook: true, Started: func() error { return errors.New("not started") }, Answering: yes}},
		"Synced: ready by both":  {r: Readiness{Draining: flag(false), CertsReady: closed, Synced: flag(true), Webhook: true, Started: serving, Answering: yes}, probe: true, turnCheck: true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tc.r.Probe() == nil; got != tc.probe {
				t.Errorf("probe ready: %v, want %v (%v)", got, tc.probe, tc.r.Probe())
			}
			if got := tc.r.Check() == nil; got != tc.turnCheck {
				t.Errorf("turn check ready: %v, want %v", got, tc.turnCheck)
			}
		})
	}
}
