package restart

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

// InProcess: the manager's run ended for a mode change, and no
// signal asks the process to stop: it runs again, in the same process. An
// exit would be counted by the kubelet as a crash, and a second mode
// change within ten minutes would wait out CrashLoopBackOff's delays.
func InProcess(err error, signals context.Context) bool {
	var change modeChange
	return errors.As(err, &change) && signals.Err() == nil
}

// Identity names this process in the turn's Lease: the pod's name
// and a random suffix, as leader election names a candidate.
func Identity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "trainjob-kueue"
	}
	return host + "_" + uuid.NewString()
}

// Restarter drains the manager for a mode change when its turn comes: the
// readiness probe fails at once (the Service stops sending webhook calls
// here) while the webhook keeps answering for shutdownDelay, as after a
// SIGTERM; then the run's context ends with modeChange. One replica at a
// time (turn): the other answers the webhooks meanwhile.
type Restarter struct {
	turn *restartwatch.Turn // nil: no namespace to coordinate in
	// rollCall says whether another replica is ready to answer while this
	// one drains (nil with turn).
	rollCall      *restartwatch.RollCall
	draining      *atomic.Bool
	shutdownDelay time.Duration
	cancel        context.CancelCauseFunc
	once          sync.Once
}

// Stop is the restart watches' callback: the manager no longer runs in
// the mode it learned at its start. Only its first call counts.
func (r *Restarter) Stop(ctx context.Context, reason error) {
	r.once.Do(func() { go r.drain(ctx, reason) })
}

func (r *Restarter) drain(ctx context.Context, reason error) {
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
		// (Webhooks), the earlier run's webhooks until the new
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
func (r *Restarter) otherReady(ctx context.Context) bool {
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

// Options are a run's restarter's.
type Options struct {
	// Client reads and writes the turn's and the roll call's Leases,
	// uncached.
	Client client.Client
	// Namespace holds the Leases, beside the leader election's; "" when
	// the process runs outside a cluster's namespace (no replica to take
	// turns with: it drains and restarts alone).
	Namespace string
	// Identity names this process in the Leases (Identity()).
	Identity string
	// Draining is the run's (DrainAfter): set when the restart drains.
	Draining *atomic.Bool
	// ShutdownDelay is how long the webhook keeps answering while the
	// readiness probe fails, before the run ends.
	ShutdownDelay time.Duration
	// Cancel ends the run, with a mode change as its cause.
	Cancel context.CancelCauseFunc
}

// New is a run's restarter: Stop is the restart watches' callback, AddTo
// adds what takes part in the replicas' turn to the run's manager.
func New(o Options) *Restarter {
	r := &Restarter{draining: o.Draining, shutdownDelay: o.ShutdownDelay, cancel: o.Cancel}
	if o.Namespace != "" {
		r.turn = &restartwatch.Turn{Client: o.Client, Namespace: o.Namespace, Identity: o.Identity, Every: 2 * time.Second, Now: time.Now}
		r.rollCall = &restartwatch.RollCall{Client: o.Client, Namespace: o.Namespace, Identity: o.Identity, Now: time.Now}
	}
	return r
}

// AddTo adds to the run's manager what takes part in the replicas' turn:
// the turn given back once ready says this run serves, and the roll call
// answered while it does. Nothing without a namespace.
func (r *Restarter) AddTo(mgr manager.Manager, ready func() error) error {
	if r.turn == nil {
		return nil
	}
	if err := mgr.Add(giveTurnWhenServing{turn: r.turn, rollCall: r.rollCall, serving: ready}); err != nil {
		return err
	}
	return mgr.Add(answerRollCall{rollCall: r.rollCall, ready: ready})
}
