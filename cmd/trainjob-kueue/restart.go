package main

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/trainjob-kueue/trainjob-kueue/restartwatch"
)

// modeChange is why a run ended for a restart in a new mode: the restart
// watches saw what the manager learned at its start no longer hold.
type modeChange struct{ reason error }

func (m modeChange) Error() string { return m.reason.Error() }
func (m modeChange) Unwrap() error { return m.reason }

// restartInProcess: the manager's run ended for a mode change, and no
// signal asks the process to stop: it runs again, in the same process. An
// exit would be counted by the kubelet as a crash, and a second mode
// change within ten minutes would wait out CrashLoopBackOff's delays.
func restartInProcess(err error, signals context.Context) bool {
	var change modeChange
	return errors.As(err, &change) && signals.Err() == nil
}

// processIdentity names this process in the turn's Lease: the pod's name
// and a random suffix, as leader election names a candidate.
func processIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "trainjob-kueue"
	}
	return host + "_" + uuid.NewString()
}

// restarter drains the manager for a mode change when its turn comes: the
// readiness probe fails at once (the Service stops sending webhook calls
// here) while the webhook keeps answering for shutdownDelay, as after a
// SIGTERM; then the run's context ends with modeChange. One replica at a
// time (turn): the other answers the webhooks meanwhile.
type restarter struct {
	turn *restartwatch.Turn // nil: no namespace to coordinate in
	// rollCall says whether another replica is ready to answer while this
	// one drains (nil with turn).
	rollCall      *restartwatch.RollCall
	draining      *atomic.Bool
	shutdownDelay time.Duration
	cancel        context.CancelCauseFunc
	once          sync.Once
}

// stop is the restart watches' callback; only its first call counts.
func (r *restarter) stop(ctx context.Context, reason error) {
	r.once.Do(func() { go r.drain(ctx, reason) })
}

func (r *restarter) drain(ctx context.Context, reason error) {
	log := ctrl.Log.WithName("restart")
	if r.turn != nil {
		log.Info("Waiting for the turn to restart (the other replica serves meanwhile)", "reason", reason.Error(), "lease", restartwatch.TurnLease)
		if err := r.turn.Take(ctx); err != nil {
			if ctx.Err() == nil {
				log.Error(err, "Restarting without the turn")
			} else {
				return
			}
		}
	}
	if !r.otherReady(ctx) {
		// Alone, draining would leave the webhook Service without a
		// ready endpoint; the webhook server answers through the restart
		// (processWebhooks), the earlier run's webhooks until the new
		// run's are synced.
		log.Info("Restarting in the new mode without draining: no other replica answered the roll call lately, and the webhook server answers through the restart", "reason", reason.Error(), "lease", restartwatch.RollCallLease)
		r.cancel(modeChange{reason})
		return
	}
	log.Info("Draining before a restart in the new mode", "reason", reason.Error(), "shutdownDelay", r.shutdownDelay)
	if r.rollCall != nil {
		if err := r.rollCall.Leave(ctx); err != nil {
			log.Error(err, "Taking this replica's answer back from the roll call")
		}
	}
	r.draining.Store(true)
	select {
	case <-time.After(r.shutdownDelay):
	case <-ctx.Done():
	}
	r.cancel(modeChange{reason})
}

// otherReady: another replica answered the roll call lately, so it takes
// the webhook calls while this one drains. Unknown (no roll call, or its
// read failed) is taken as yes, the drain as before the roll call.
func (r *restarter) otherReady(ctx context.Context) bool {
	if r.rollCall == nil {
		return true
	}
	ok, err := r.rollCall.OtherReady(ctx)
	if err != nil {
		ctrl.Log.WithName("restart").Error(err, "Reading the replicas' roll call: draining as if another replica were ready")
		return true
	}
	return ok
}

// answerRollCall answers the replicas' roll call every
// restartwatch.RollCallEvery while this replica is ready (ready), and
// takes its answer back once it is not (it drains, it stops).
type answerRollCall struct {
	rollCall *restartwatch.RollCall
	ready    func() error
}

// Start implements manager.Runnable. Readiness is looked at every second,
// so a replica answers as soon as it is ready (a replica whose turn comes
// next asks at once) and takes its answer back as soon as it is not.
func (a answerRollCall) Start(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var answered time.Time
	for {
		switch ready := a.ready() == nil; {
		case ready && time.Since(answered) >= restartwatch.RollCallEvery:
			if err := a.rollCall.Answer(ctx); err != nil {
				ctrl.Log.WithName("restart").Error(err, "Answering the replicas' roll call")
			} else {
				answered = time.Now()
			}
		case !ready && !answered.IsZero():
			if err := a.rollCall.Leave(ctx); err == nil {
				answered = time.Time{}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// NeedLeaderElection: every replica answers.
func (answerRollCall) NeedLeaderElection() bool { return false }

// giveTurnWhenServing gives the turn back once this replica serves again
// (the webhook certificate in place, the webhook server started and what
// the webhooks read synced, as the readiness probe says): the other
// replica may restart then. Until then, for maxRestart at most, it renews
// the turn, should this process hold it (its restart for a mode change),
// so a slow start (a large cache to sync) keeps it. A turn held by a process that crashed
// is renewed by nobody: it runs out after its hold
// (restartwatch.Turn), and the next replica takes it.
type giveTurnWhenServing struct {
	turn *restartwatch.Turn
	// rollCall, when set, is answered before the turn goes: the replica
	// that takes it next sees this one ready, and drains.
	rollCall *restartwatch.RollCall
	serving  func() error
}

// Start implements manager.Runnable.
func (g giveTurnWhenServing) Start(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	began, renewed := time.Now(), time.Now()
	for {
		if g.serving() == nil {
			if g.rollCall != nil {
				if err := g.rollCall.Answer(ctx); err != nil {
					ctrl.Log.WithName("restart").Error(err, "Answering the replicas' roll call")
				}
			}
			if err := g.turn.Give(ctx); err != nil {
				ctrl.Log.WithName("restart").Error(err, "Giving back the turn to restart")
			} else {
				return nil
			}
		} else if time.Since(renewed) >= g.turn.RenewEvery() && time.Since(began) < maxRestart {
			if err := g.turn.Renew(ctx); err != nil {
				ctrl.Log.WithName("restart").Error(err, "Renewing the turn to restart")
			} else {
				renewed = time.Now()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// maxRestart is how long a restart renews its turn at most: a replica that
// runs but never becomes ready (its caches never sync) must not keep the
// other from restarting into the new mode for good.
const maxRestart = 10 * time.Minute

// NeedLeaderElection: every replica restarts, and gives its turn back.
func (giveTurnWhenServing) NeedLeaderElection() bool { return false }

var _ manager.LeaderElectionRunnable = giveTurnWhenServing{}

// newTurn is the replicas' turn in namespace (nil without one: a process
// outside a cluster's namespace has no replica to take turns with).
func newTurn(c client.Client, namespace, identity string) *restartwatch.Turn {
	if namespace == "" {
		return nil
	}
	return &restartwatch.Turn{Client: c, Namespace: namespace, Identity: identity, Every: 2 * time.Second, Now: time.Now}
}

// newRollCall is the replicas' roll call in namespace (nil without one).
func newRollCall(c client.Client, namespace, identity string) *restartwatch.RollCall {
	if namespace == "" {
		return nil
	}
	return &restartwatch.RollCall{Client: c, Namespace: namespace, Identity: identity, Now: time.Now}
}

// turnNamespace is where the turn's Lease lives: beside the leader
// election's.
func turnNamespace(f flags) string {
	if f.leaderElectNS != "" {
		return f.leaderElectNS
	}
	return f.namespace
}
