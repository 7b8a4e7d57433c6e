package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
	tjwebhook "github.com/trainjob-kueue/trainjob-kueue/webhook"
)

// readiness is when a replica takes webhook calls (a Service routes them
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
type readiness struct {
	draining   *atomic.Bool
	certsReady <-chan struct{}
	// synced: every webhook is registered and what they read is synced
	// (syncReads).
	synced *atomic.Bool
	// webhook: the process serves webhooks (not --disable-webhook).
	webhook bool
	// started is the webhook server's own check.
	started func() error
	// answering: an earlier run's webhooks answer on the process's server
	// (processWebhooks) while this run syncs; nil when none can.
	answering func() bool
}

// probe is the readiness the kubelet asks: check, or, while a run
// restarted in process for a mode change is syncing, the earlier run's
// webhooks answering in its place (processWebhooks keeps them until this
// run serves). A lone replica so stays Ready, and in its Service, through
// its mode change, where failing the probe for the restart's seconds took
// it out (no endpoints: every call refused). The turn of a mode change is
// given back on check alone: the other replica restarts only once this
// run answers with its own webhooks.
func (r readiness) probe() error {
	err := r.check()
	if err == nil || r.draining.Load() || !r.webhook || r.answering == nil || !r.answering() {
		return err
	}
	select {
	case <-r.certsReady:
	default:
		return err
	}
	if r.started() != nil {
		return err
	}
	return nil
}

func (r readiness) check() error {
	if r.draining.Load() {
		return errors.New("shutting down")
	}
	select {
	case <-r.certsReady:
	default:
		return errors.New("webhook certificate not ready")
	}
	if !r.synced.Load() {
		return errors.New("the webhooks are not registered, or what they read not synced, yet")
	}
	if !r.webhook {
		return nil
	}
	return r.started()
}

// syncReads makes the informers of what the webhooks read and waits until
// they, and every informer made so far, are synced; false when ctx ends
// first or an informer cannot be made (said in the log: the replica then
// never becomes ready, rather than refusing calls).
func syncReads(ctx context.Context, mgr ctrl.Manager, opts integration.Options, withWebhook bool) bool {
	if withWebhook {
		for _, o := range tjwebhook.CachedReads() {
			if _, err := mgr.GetCache().GetInformer(ctx, o, cache.BlockUntilSynced(false)); err != nil {
				ctrl.Log.WithName("setup").Error(err, "Making the informer of what the webhooks read: this replica stays unready", "kind", fmt.Sprintf("%T", o))
				return false
			}
		}
	}
	return mgr.GetCache().WaitForCacheSync(ctx)
}
