package integration

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// runtimeFanOutPerSecond paces the jobs a runtime event enqueues. An edit
// of a runtime thousands of queued jobs use would otherwise put them all in
// the queue at once: before Trainer's runtime snapshot each may rewrite
// its Workload (two writes), and an admission arriving meanwhile would wait
// behind all of them. Paced, they take a share of the client's budget (50
// QPS by default) and admissions interleave.
const runtimeFanOutPerSecond = 20

// pacedFanOut enqueues the requests mapFn returns for an event no faster
// than perSecond, across events: each request gets the next free slot.
type pacedFanOut struct {
	mapFn     handler.MapFunc
	perSecond float64
	now       func() time.Time

	mu sync.Mutex
	// next is the earliest time the next request may be processed.
	next time.Time
}

func newPacedFanOut(mapFn handler.MapFunc, perSecond float64) *pacedFanOut {
	return &pacedFanOut{mapFn: mapFn, perSecond: perSecond, now: time.Now}
}

type requestQueue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (p *pacedFanOut) Create(ctx context.Context, e event.CreateEvent, q requestQueue) {
	if e.IsInInitialList {
		// The start: every job is enqueued by its own informer already.
		return
	}
	p.enqueue(ctx, e.Object, q)
}

func (p *pacedFanOut) Update(ctx context.Context, e event.UpdateEvent, q requestQueue) {
	// A runtime's name never changes: the new object maps to the same jobs.
	p.enqueue(ctx, e.ObjectNew, q)
}

func (p *pacedFanOut) Delete(ctx context.Context, e event.DeleteEvent, q requestQueue) {
	p.enqueue(ctx, e.Object, q)
}

func (p *pacedFanOut) Generic(ctx context.Context, e event.GenericEvent, q requestQueue) {
	p.enqueue(ctx, e.Object, q)
}

func (p *pacedFanOut) enqueue(ctx context.Context, o client.Object, q requestQueue) {
	reqs := p.mapFn(ctx, o)
	if len(reqs) == 0 {
		return
	}
	gap := time.Duration(float64(time.Second) / p.perSecond)
	p.mu.Lock()
	now := p.now()
	slot := now
	if p.next.After(now) {
		slot = p.next
	}
	delays := make([]time.Duration, len(reqs))
	for i := range reqs {
		delays[i] = slot.Sub(now)
		slot = slot.Add(gap)
	}
	p.next = slot
	p.mu.Unlock()
	for i, r := range reqs {
		if delays[i] == 0 {
			q.Add(r)
			continue
		}
		q.AddAfter(r, delays[i])
	}
}

func (r *Reconciler) jobsUsing(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		ref := runtimesource.Ref{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}
		var jobs trainjob.TrainJobList
		opts := []client.ListOption{client.MatchingFields{names.RuntimeIndex: ref.IndexKey()}}
		if ref.Namespace != "" {
			opts = append(opts, client.InNamespace(ref.Namespace))
		}
		if err := r.deps.client.List(ctx, &jobs, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing TrainJobs of a runtime", "runtime", ref.String())
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(jobs.Items))
		for i := range jobs.Items {
			if _, _, done := jobs.Items[i].Finished(); done {
				continue
			}
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&jobs.Items[i])})
		}
		return reqs
	}
}
