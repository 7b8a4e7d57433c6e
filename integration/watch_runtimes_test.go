package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// delayRecorder is a work queue that records when each request was asked
// to be processed.
type delayRecorder struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	delays []time.Duration
}

func (d *delayRecorder) Add(reconcile.Request) { d.delays = append(d.delays, 0) }

func (d *delayRecorder) AddAfter(_ reconcile.Request, after time.Duration) {
	d.delays = append(d.delays, after)
}

func TestRuntimeFanOutIsPacedAcrossEvents(t *testing.T) {
	jobs := func(n int) func(context.Context, client.Object) []reconcile.Request {
		return func(context.Context, client.Object) []reconcile.Request {
			out := make([]reconcile.Request, n)
			for i := range out {
				out[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprint("job-", i)}}
			}
			return out
		}
	}
	clock := time.Unix(1000, 0)
	p := newPacedFanOut(jobs(4), 2)
	p.now = func() time.Time { return clock }
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "torch"}}
	q := &delayRecorder{}
	ms := func(d ...int) []time.Duration {
		out := make([]time.Duration, len(d))
		for i := range d {
			out[i] = time.Duration(d[i]) * time.Millisecond
		}
		return out
	}

	p.Update(context.Background(), event.UpdateEvent{ObjectOld: rt, ObjectNew: rt}, q)
	if diff := cmp.Diff(ms(0, 500, 1000, 1500), q.delays); diff != "" {
		t.Errorf("an edit under 4 jobs at 2/s (-want +got):\n%s", diff)
	}
	// A second edit half a second later queues behind the first's jobs.
	clock = clock.Add(500 * time.Millisecond)
	q.delays = nil
	p.Update(context.Background(), event.UpdateEvent{ObjectOld: rt, ObjectNew: rt}, q)
	if diff := cmp.Diff(ms(1500, 2000, 2500, 3000), q.delays); diff != "" {
		t.Errorf("a second edit right after (-want +got):\n%s", diff)
	}
	// The runtimes listed at the start enqueue nothing: the jobs' own
	// informer enqueues every job then.
	q.delays = nil
	p.Create(context.Background(), event.CreateEvent{Object: rt, IsInInitialList: true}, q)
	if len(q.delays) != 0 {
		t.Errorf("a runtime of the initial list enqueued %d jobs", len(q.delays))
	}
	// Once the pace has caught up, an event starts at once again.
	clock = clock.Add(time.Minute)
	q.delays = nil
	p.Create(context.Background(), event.CreateEvent{Object: rt}, q)
	if diff := cmp.Diff(ms(0, 500, 1000, 1500), q.delays); diff != "" {
		t.Errorf("an event after a quiet minute (-want +got):\n%s", diff)
	}
}

// A runtime's event concerns the unfinished jobs that name it, by kind,
// namespace and name; a ClusterTrainingRuntime's, those of every namespace.
func TestRuntimeEventsBringTheJobsThatUseIt(t *testing.T) {
	job := func(ns, name, kind, runtime string, finished bool) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		j.Spec.RuntimeRef = trainer.RuntimeRef{Name: runtime, Kind: ptr.To(kind)}
		if finished {
			j.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
		}
		return j
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithIndex(&trainjob.TrainJob{}, names.RuntimeIndex, runtimeIndexKeys).WithObjects(
		job("a", "torch-a", trainer.TrainingRuntimeKind, "torch", false),
		job("b", "torch-b", trainer.TrainingRuntimeKind, "torch", false),
		job("a", "done", trainer.TrainingRuntimeKind, "torch", true),
		job("a", "cluster-a", trainer.ClusterTrainingRuntimeKind, "torch", false),
		job("b", "cluster-b", trainer.ClusterTrainingRuntimeKind, "torch", false),
		job("a", "mpi", trainer.TrainingRuntimeKind, "mpi", false),
	).Build()
	r := &Reconciler{deps: &deps{client: c}}
	for name, tc := range map[string]struct {
		kind, ns string
		want     []string
	}{
		"TrainingRuntime a/torch":       {kind: trainer.TrainingRuntimeKind, ns: "a", want: []string{"a/torch-a"}},
		"ClusterTrainingRuntime torch":  {kind: trainer.ClusterTrainingRuntimeKind, want: []string{"a/cluster-a", "b/cluster-b"}},
		"TrainingRuntime c/torch: none": {kind: trainer.TrainingRuntimeKind, ns: "c"},
	} {
		t.Run(name, func(t *testing.T) {
			rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: "torch"}}
			var got []string
			for _, req := range r.jobsUsing(tc.kind)(t.Context(), rt) {
				got = append(got, req.String())
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
