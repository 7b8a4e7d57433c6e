package integration

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// pendingWorkload is a queued TrainJob's Workload as Kueue leaves it after
// a try that found no room.
func pendingWorkload() *kueue.Workload {
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl", ResourceVersion: "1", Generation: 1,
			Labels: map[string]string{"kueue.x-k8s.io/job-uid": "uid"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind,
				Name: "job", UID: types.UID("uid"), Controller: ptr.To(true)}}},
		Spec: kueue.WorkloadSpec{QueueName: "team-a", Active: ptr.To(true)},
		Status: kueue.WorkloadStatus{Conditions: []metav1.Condition{
			{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending",
				Message:            "couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor a100, 8 more needed",
				LastTransitionTime: metav1.NewTime(time.Unix(100, 0))},
			{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionFalse, Reason: "WaitForStart", Message: "Not all pods are ready or succeeded"},
		}},
	}
}

func TestOnlyARewordedPendingMessageIsNoReasonToReconcile(t *testing.T) {
	edit := func(f func(wl *kueue.Workload)) *kueue.Workload {
		wl := pendingWorkload()
		wl.ResourceVersion = "2"
		f(wl)
		return wl
	}
	reserved := func(wl *kueue.Workload) {
		wl.Status.Conditions[0].Status, wl.Status.Conditions[0].Reason = metav1.ConditionTrue, "QuotaReserved"
	}
	cases := map[string]struct {
		old, new *kueue.Workload
		dropped  bool
	}{
		"Kueue rewords the pending message": {
			old:     pendingWorkload(),
			new:     edit(func(wl *kueue.Workload) { wl.Status.Conditions[0].Message = "… 4 more needed" }),
			dropped: true,
		},
		"a resync": {old: pendingWorkload(), new: pendingWorkload()},
		"quota reserved": {
			old: pendingWorkload(),
			new: edit(reserved),
		},
		"a reworded message on a Workload holding quota": {
			old: func() *kueue.Workload { wl := pendingWorkload(); reserved(wl); return wl }(),
			new: edit(func(wl *kueue.Workload) { reserved(wl); wl.Status.Conditions[0].Message = "admitted" }),
		},
		"a new reason": {
			old: pendingWorkload(),
			new: edit(func(wl *kueue.Workload) { wl.Status.Conditions[0].Reason = "Inadmissible" }),
		},
		"another condition's message": {
			old: pendingWorkload(),
			new: edit(func(wl *kueue.Workload) { wl.Status.Conditions[1].Message = "waiting" }),
		},
		"a condition added": {
			old: pendingWorkload(),
			new: edit(func(wl *kueue.Workload) {
				wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: "Preempted"})
			}),
		},
		"the requeue state": {
			old: pendingWorkload(),
			new: edit(func(wl *kueue.Workload) { wl.Status.RequeueState = &kueue.RequeueState{Count: ptr.To[int32](1)} }),
		},
		"deactivated (a spec change)": {
			old: pendingWorkload(),
			new: edit(func(wl *kueue.Workload) { wl.Generation, wl.Spec.Active = 2, ptr.To(false) }),
		},
		"a label": {
			old: pendingWorkload(),
			new: edit(func(wl *kueue.Workload) { wl.Labels["kueue.x-k8s.io/priority-class"] = "high" }),
		},
		"being deleted": {
			old: pendingWorkload(),
			new: edit(func(wl *kueue.Workload) { wl.DeletionTimestamp = ptr.To(metav1.NewTime(time.Unix(200, 0))) }),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.old.DeepCopy()
			passed := notOnlyReworded().Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})
			if passed == tc.dropped {
				t.Errorf("update passed %v, want %v", passed, !tc.dropped)
			}
			if tc.old.Status.Conditions[0].Message != before.Status.Conditions[0].Message || tc.old.ResourceVersion != before.ResourceVersion {
				t.Errorf("the cached object was changed")
			}
		})
	}
	for name, e := range map[string]bool{
		"create":  notOnlyReworded().Create(event.CreateEvent{Object: pendingWorkload()}),
		"delete":  notOnlyReworded().Delete(event.DeleteEvent{Object: pendingWorkload()}),
		"generic": notOnlyReworded().Generic(event.GenericEvent{Object: pendingWorkload()}),
	} {
		if !e {
			t.Errorf("a %s event was dropped", name)
		}
	}
}

// A job whose Workload Kueue just decided on, or whose Workload holds quota
// and changed, is reconciled before the jobs whose pending Workloads only
// changed otherwise, and the initial list's come last.
func TestKueuesDecisionsAreReconciledFirst(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(trainjob.GVK, meta.RESTScopeNamespace)
	h := decisionsFirst(handler.EnqueueRequestForOwner(scheme.New(), mapper, &trainjob.TrainJob{}, handler.OnlyControllerOwner()))
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
		// Thousands may hold quota waiting on their checks: their updates
		// must not crowd the decisions and the arrivals.
		"quota reserved, waiting on its admission checks": {old: wl("1", true, kueue.WorkloadQuotaReserved), new: wl("2", true, kueue.WorkloadQuotaReserved), want: 0},
		"a resync": {old: wl("1", true), new: wl("1", true), want: handler.LowPriority},
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
