package integration

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// priorities records the priority of each request added.
type priorities struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	got map[reconcile.Request]int
}

func (p *priorities) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	for _, r := range items {
		p.got[r] = ptr.Deref(o.Priority, 0)
	}
}
func (p *priorities) Add(r reconcile.Request) { p.AddWithOpts(priorityqueue.AddOpts{}, r) }
func (p *priorities) GetWithPriority() (reconcile.Request, int, bool) {
	return reconcile.Request{}, 0, true
}

// A job whose Workload Kueue just decided on, or whose Workload holds quota
// and changed, is reconciled before the jobs whose pending Workloads only
// changed otherwise, and the initial list's come last.
func TestKueuesDecisionsAreReconciledFirst(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(GVK, meta.RESTScopeNamespace)
	h := decisionsFirst(handler.EnqueueRequestForOwner(NewScheme(), mapper, &trainjob.TrainJob{}, handler.OnlyControllerOwner()))
	wl := func(rv string, active bool, conds ...string) *kueue.Workload {
		w := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl", ResourceVersion: rv, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: "job", UID: types.UID("uid"), Controller: ptr.To(true)}}}}
		w.Spec.Active = ptr.To(active)
		for _, c := range conds {
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue})
		}
		return w
	}
	job := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "job"}}
	cases := map[string]struct {
		old, new *kueue.Workload
		want     int
	}{
		"quota reserved":                   {old: wl("1", true), new: wl("2", true, kueue.WorkloadQuotaReserved), want: decisionPriority},
		"admitted":                         {old: wl("1", true, kueue.WorkloadQuotaReserved), new: wl("2", true, kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted), want: decisionPriority},
		"evicted":                          {old: wl("1", true, kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted), new: wl("2", true, kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted, kueue.WorkloadEvicted), want: decisionPriority},
		"deactivated":                      {old: wl("1", true), new: wl("2", false), want: decisionPriority},
		"a pending Workload's requeue":     {old: wl("1", true), new: wl("2", true), want: 0},
		"holding quota, PodsReady written": {old: wl("1", true, kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted), new: wl("2", true, kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted, kueue.WorkloadPodsReady), want: decisionPriority},
		"holding quota, finished":          {old: wl("1", true, kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted), new: wl("2", true, kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted, kueue.WorkloadFinished), want: 0},
		"holding quota, a resync":          {old: wl("1", true, kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted), new: wl("1", true, kueue.WorkloadQuotaReserved, kueue.WorkloadAdmitted), want: handler.LowPriority},
		"a resync":                         {old: wl("1", true), new: wl("1", true), want: handler.LowPriority},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := &priorities{got: map[reconcile.Request]int{}}
			h.Update(t.Context(), event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}, q)
			got, ok := q.got[job]
			if !ok || got != tc.want {
				t.Errorf("enqueued %v at priority %d, want priority %d", ok, got, tc.want)
			}
		})
	}
	q := &priorities{got: map[reconcile.Request]int{}}
	h.Create(t.Context(), event.CreateEvent{Object: wl("1", true), IsInInitialList: true}, q)
	if got := q.got[job]; got != handler.LowPriority {
		t.Errorf("initial list at priority %d, want %d", got, handler.LowPriority)
	}
}

// Updates of a TrainJob that runs under Kueue go ahead of the queued jobs;
// every other update, and resyncs, keep the default path.
func TestStartedJobsUpdatesAreReconciledFirst(t *testing.T) {
	job := func(rv string, suspended bool, queue string, activePods ...int32) *trainjob.TrainJob {
		j := &trainjob.TrainJob{}
		j.Namespace, j.Name, j.ResourceVersion = "ns", "job", rv
		j.Spec.Suspend = ptr.To(suspended)
		if queue != "" {
			j.Labels = map[string]string{queueLabel: queue}
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
			startedFirst().Update(t.Context(), e, q)
			if got, ok := q.got[req]; !ok || got != decisionPriority {
				t.Errorf("enqueued %v at priority %d, want %d", ok, got, decisionPriority)
			}
		})
	}
}
