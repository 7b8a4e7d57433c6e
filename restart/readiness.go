package restart

import (
	"errors"
	"sync/atomic"
)

// Readiness is when a replica takes webhook calls (a Service routes them
// to ready pods only; the turn of a mode change is given back on it): once
// its serving certificate exists, its webhook server runs with every
// webhook registered and the caches the webhooks read are synced; no
// longer once it drains.
//
// Without the last two, a replica restarted in process for a mode change
// was ready while it still registered its webhooks ("the server could not
// find the requested resource") and while a call's read made and synced
// an informer within the call's deadline ("Timeout: failed waiting for
// *v1beta2.ClusterQueue Informer to sync"): creates refused in the
// MultiKueue switch e2e.
type Readiness struct {
	Draining   *atomic.Bool
	CertsReady <-chan struct{}
	// Synced: every webhook is registered and what they read is synced
	// (syncReads).
	Synced *atomic.Bool
	// Webhook: the process serves webhooks (not --disable-webhook).
	Webhook bool
	// Started is the webhook server's own check.
	Started func() error
	// Answering: an earlier run's webhooks answer on the process's server
	// (Webhooks) while this run syncs; nil when none can.
	Answering func() bool
}

// Probe is the readiness the kubelet asks: check, or, while a run
// restarted in process for a mode change is syncing, the earlier run's
// webhooks answering in its place (Webhooks keeps them until this
// run serves). A lone replica so stays Ready, and in its Service, through
// its mode change, where failing the probe for the restart's seconds took
// it out (no endpoints: every call refused). The turn of a mode change is
// given back on check alone: the other replica restarts only once this
// run answers with its own webhooks.
func (r Readiness) Probe() error {
	err := r.Check()
	if err == nil || r.Draining.Load() || !r.Webhook || r.Answering == nil || !r.Answering() {
		return err
	}
	select {
	case <-r.CertsReady:
	default:
		return err
	}
	if r.Started() != nil {
		return err
	}
	return nil
}

func (r Readiness) Check() error {
	if r.Draining.Load() {
		return errors.New("shutting down")
	}
	select {
	case <-r.CertsReady:
	default:
		return errors.New("webhook certificate not ready")
	}
	if !r.Synced.Load() {
		return errors.New("the webhooks are not registered, or what they read not synced, yet")
	}
	if !r.Webhook {
		return nil
	}
	return r.Started()
}
