package gang

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// waitingGangs are the started jobs whose gang waits for room. When another
// job stops running (finished or suspended) its nodes free up: some waiting
// gangs are retried then, not only at the next interval. Only a few per
// stop (retryPerStop), longest unretried first: one job's nodes can place
// few gangs, and a cluster with many waiting would otherwise answer every
// stop with a retry of all of them.
type waitingGangs struct {
	mu sync.Mutex
	// jobs maps a waiting job to whether it is to be retried now.
	jobs map[types.NamespacedName]bool
	// order is the waiting jobs, the longest unretried first.
	order []types.NamespacedName
}

// retryPerStop bounds the gangs retried when a job stops.
const retryPerStop = 8

func newWaitingGangs() *waitingGangs {
	return &waitingGangs{jobs: map[types.NamespacedName]bool{}}
}

// set records whether job's gang waits.
func (w *waitingGangs) set(job types.NamespacedName, waiting bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !waiting {
		if _, ok := w.jobs[job]; ok {
			delete(w.jobs, job)
			w.order = slices.DeleteFunc(w.order, func(j types.NamespacedName) bool { return j == job })
		}
		return
	}
	if _, ok := w.jobs[job]; !ok {
		w.jobs[job] = false
		w.order = append(w.order, job)
	}
}

// now marks up to retryPerStop waiting jobs, the longest unretried first,
// to be retried now, and returns them; they go to the back of the line.
func (w *waitingGangs) now() []types.NamespacedName {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := min(retryPerStop, len(w.order))
	out := slices.Clone(w.order[:n])
	w.order = append(w.order[n:], out...)
	for _, job := range out {
		w.jobs[job] = true
	}
	return out
}

// takeNow reports whether job is to be retried now, once.
func (w *waitingGangs) takeNow(job types.NamespacedName) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.jobs[job]
	if now {
		w.jobs[job] = false
	}
	return now
}

// stoppedRunning: the job ran pods and no longer does, or is about to stop.
func stoppedRunning(old, cur *trainjob.TrainJob) bool {
	running := func(j *trainjob.TrainJob) bool {
		if j.Suspended() {
			return false
		}
		_, _, finished := j.Finished()
		return !finished
	}
	return running(old) && !running(cur)
}

// onStop enqueues the waiting gangs for a retry when a job stops running.
func (w *waitingGangs) onStop() handler.TypedEventHandler[*trainjob.TrainJob, reconcile.Request] {
	return handler.TypedFuncs[*trainjob.TrainJob, reconcile.Request]{
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*trainjob.TrainJob], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if !stoppedRunning(e.ObjectOld, e.ObjectNew) {
				return
			}
			for _, job := range w.now() {
				q.Add(reconcile.Request{NamespacedName: job})
			}
		},
	}
}
