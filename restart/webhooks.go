package restart

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Webhooks is the process's webhook server. The first run starts
// it and it listens until the process ends, so the in-process restart of
// a mode change refuses no call: with one replica (the local cluster's
// default, a small install) a server stopped and started again with the
// run refused the calls sent meanwhile ("failed to call webhook: Post
// https://127.0.0.1:…", 1 in about 100 dry-run creates through a switch).
//
// Each run registers its webhooks on a server of its own (ForRun); they
// answer once the run serves (its webhooks registered and what they read
// synced: RunWebhooks.serve), and until then the earlier run's answer, from
// the caches that run left (stopped, still readable), as the other
// replica's would when there are two.
type Webhooks struct {
	server webhook.Server
	// ctx is the process's: the server stops when it ends.
	ctx context.Context

	mu sync.RWMutex
	// serving are the handlers of the run that serves, by path; latest
	// are the newest run's, for paths no serving run has (the first run
	// before it serves, as a server of its own would).
	serving, latest map[string]http.Handler
	// mounted: paths routed on server (a mux takes a path once).
	mounted map[string]bool

	start   sync.Once
	started atomic.Bool
	stopped chan error
}

func NewWebhooks(ctx context.Context, server webhook.Server) *Webhooks {
	return &Webhooks{server: server, ctx: ctx, serving: map[string]http.Handler{}, latest: map[string]http.Handler{},
		mounted: map[string]bool{}, stopped: make(chan error, 1)}
}

// ForRun is the webhook server a run's manager registers on and starts.
// draining is the run's: while it drains, its answers close their
// connections (closeWhenDraining).
func (p *Webhooks) ForRun(draining *atomic.Bool) *RunWebhooks {
	return &RunWebhooks{p: p, handlers: map[string]http.Handler{}, mux: http.NewServeMux(), draining: draining}
}

// answering: some run's webhooks answer on the server (a run served,
// perhaps one before this process's latest restart).
func (p *Webhooks) Answering() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.started.Load() && len(p.serving) > 0
}

// route answers a call on path with the serving run's handler.
func (p *Webhooks) route(path string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.RLock()
		h, ok := p.serving[path]
		if !ok {
			h, ok = p.latest[path]
		}
		p.mu.RUnlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// wait waits, at most timeout, for the server to stop once the process's
// context ended: in-flight calls are answered (its graceful shutdown).
func (p *Webhooks) Wait(timeout time.Duration) {
	if !p.started.Load() {
		return
	}
	select {
	case <-p.stopped:
	case <-time.After(timeout):
	}
}

// RunWebhooks is one run's view of the process's webhook server, a
// webhook.Server for its manager.
type RunWebhooks struct {
	p        *Webhooks
	handlers map[string]http.Handler
	// mux is the run's own: controller-runtime's webhook builder registers
	// a path only if the server's mux has no handler for it yet
	// (isAlreadyHandled), and the process's has every path of the runs
	// before: handed that one, a new run registered nothing and the
	// earlier run's webhooks, on its stopped caches, answered for good
	// (seen: a job refused "Namespace … not found" for a namespace made
	// after the restart).
	mux      *http.ServeMux
	draining *atomic.Bool
}

var _ webhook.Server = (*RunWebhooks)(nil)

// Register implements webhook.Server: hook answers on path once this run
// serves.
func (r *RunWebhooks) Register(path string, hook http.Handler) {
	closing := closeWhenDraining{draining: r.draining}.wrap(hook)
	r.mux.Handle(path, closing)
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	r.handlers[path] = closing
	r.p.latest[path] = closing
	if !r.p.mounted[path] {
		r.p.mounted[path] = true
		r.p.server.Register(path, r.p.route(path))
	}
}

// serve makes this run's handlers the ones that answer.
func (r *RunWebhooks) Serve() {
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	r.p.serving = r.handlers
}

// Start implements webhook.Server: the first run's starts the process's
// server; every run's returns when its run ends, leaving it listening.
func (r *RunWebhooks) Start(ctx context.Context) error {
	r.p.start.Do(func() {
		r.p.started.Store(true)
		go func() { r.p.stopped <- r.p.server.Start(r.p.ctx) }()
	})
	select {
	case <-ctx.Done():
		return nil
	case err := <-r.p.stopped:
		// Stopped before its process: the error is this run's (and the
		// process ends with it).
		r.p.stopped <- err
		return err
	}
}

// NeedLeaderElection implements webhook.Server: every replica serves.
func (r *RunWebhooks) NeedLeaderElection() bool { return false }

// StartedChecker implements webhook.Server.
func (r *RunWebhooks) StartedChecker() healthz.Checker { return r.p.server.StartedChecker() }

// WebhookMux implements webhook.Server: the run's own mux, with the paths
// this run registered (see mux).
func (r *RunWebhooks) WebhookMux() *http.ServeMux { return r.mux }
