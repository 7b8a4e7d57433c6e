package integration

import (
	"testing"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/kueue/pkg/controller/constants"
)

// Updates of a TrainJob that runs under Kueue go ahead of the queued jobs;
// every other update, and resyncs, keep the default path.
func TestStartedJobsUpdatesAreReconciledFirst(t *testing.T) {
	job := func(rv string, suspended bool, queue string, activePods ...int32) *trainjob.TrainJob {
		j := &trainjob.TrainJob{}
		j.Namespace, j.Name, j.ResourceVersion = "ns", "job", rv
		j.Spec.Suspend = ptr.To(suspended)
		if queue != "" {
			j.Labels = map[string]string{constants.QueueLabel: queue}
		}
		for _, n := range activePods {
			j.Status.JobsStatus = append(j.Status.JobsStatus, trainer.JobStatus{Name: "node", Active: ptr.To(n)})
		}
		return j
	}
	cases := map[string]struct {
		old, new  *trainjob.TrainJob
		manageAll bool
		want      bool
	}{
		"running, queued in Kueue, status changed": {old: job("1", false, "lq"), new: job("2", false, "lq"), want: true},
		"just unsuspended":                         {old: job("1", true, "lq"), new: job("2", false, "lq"), want: true},
		"suspended (queued)":                       {old: job("1", true, "lq"), new: job("2", true, "lq"), want: false},
		"just suspended (preempted)":               {old: job("1", false, "lq", 2), new: job("2", true, "lq", 2), want: true},
		"stopped, its last pods gone":              {old: job("1", true, "lq", 1), new: job("2", true, "lq", 0), want: true},
		"stopped long ago, status changed":         {old: job("1", true, "lq", 0), new: job("2", true, "lq", 0), want: false},
		"running, a resync":                        {old: job("2", false, "lq"), new: job("2", false, "lq"), want: false},
		"running without a queue":                  {old: job("1", false, ""), new: job("2", false, ""), want: false},
		"running without a queue, all managed":     {old: job("1", false, ""), new: job("2", false, ""), manageAll: true, want: true},
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "job"}}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}
			if got := startedUnderKueue(e, tc.manageAll); got != tc.want {
				t.Fatalf("startedUnderKueue = %v, want %v", got, tc.want)
			}
			if !tc.want {
				return
			}
			q := &priorities{got: map[reconcile.Request]int{}}
			arrivedOrStartedFirst().Update(t.Context(), e, q)
			if got, ok := q.got[req]; !ok || got != decisionPriority {
				t.Errorf("enqueued %v at priority %d, want %d", ok, got, decisionPriority)
			}
		})
	}
}

// A TrainJob that arrives goes ahead of the queued jobs' reconciles: its
// first reconcile creates the Workload it waits on. The jobs of the
// informer's first list (a restart) are no arrivals: not enqueued here at
// all (the controller's own watch enqueues them at the default priority).
func TestArrivalsAreReconciledFirst(t *testing.T) {
	j := &trainjob.TrainJob{}
	j.Namespace, j.Name = "ns", "job"
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "job"}}

	q := &priorities{got: map[reconcile.Request]int{}}
	arrivedOrStartedFirst().Create(t.Context(), event.CreateEvent{Object: j}, q)
	if got, ok := q.got[req]; !ok || got != arrivalPriority {
		t.Errorf("an arrival enqueued %v at priority %d, want %d", ok, got, arrivalPriority)
	}
	if arrivalPriority <= 0 || arrivalPriority >= decisionPriority {
		t.Errorf("arrivals at %d: want them after the starts (%d) and before the rest (0)", arrivalPriority, decisionPriority)
	}

	q = &priorities{got: map[reconcile.Request]int{}}
	arrivedOrStartedFirst().Create(t.Context(), event.CreateEvent{Object: j, IsInInitialList: true}, q)
	if _, ok := q.got[req]; ok {
		t.Errorf("a job of the first list was enqueued ahead: %v", q.got)
	}
}

// Each TrainJob update takes one route into the queue; our queue
// condition's write alone takes none, a queued job's or a running one's.
func TestEachUpdateTakesOneRouteAndOurConditionNone(t *testing.T) {
	job := func(rv string, suspended bool, mutate ...func(*trainjob.TrainJob)) *trainjob.TrainJob {
		j := &trainjob.TrainJob{}
		j.Namespace, j.Name, j.ResourceVersion = "ns", "job", rv
		j.Labels = map[string]string{constants.QueueLabel: "lq"}
		j.Spec.Suspend = ptr.To(suspended)
		for _, m := range mutate {
			m(j)
		}
		return j
	}
	say := func(typ, reason string) func(*trainjob.TrainJob) {
		return func(j *trainjob.TrainJob) {
			apimeta.SetStatusCondition(&j.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason})
		}
	}
	ours := func(reason string) func(*trainjob.TrainJob) { return say(names.AdmittedCondition, reason) }
	for name, tc := range map[string]struct {
		old, new *trainjob.TrainJob
		want     route
	}{
		"queued, our condition written":          {old: job("1", true), new: job("2", true, ours("Queued")), want: routeNone},
		"running, our condition rewritten":       {old: job("1", false, ours("Queued")), new: job("2", false, ours("Admitted")), want: routeNone},
		"queued, Trainer's condition":            {old: job("1", true, ours("Queued")), new: job("2", true, ours("Queued"), say("Created", "JobSetCreated")), want: routeDefault},
		"running, Trainer's condition with ours": {old: job("1", false), new: job("2", false, say("Complete", "Done"), ours("Finished")), want: routeFirst},
		"unsuspended with our condition":         {old: job("1", true, ours("Queued")), new: job("2", false, ours("Admitted")), want: routeFirst},
		"a resync of a queued job with ours":     {old: job("2", true, ours("Queued")), new: job("2", true, ours("Queued")), want: routeDefault},
	} {
		t.Run(name, func(t *testing.T) {
			if got := routeOf(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}, false); got != tc.want {
				t.Errorf("routeOf = %d, want %d", got, tc.want)
			}
		})
	}
}
