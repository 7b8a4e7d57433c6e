package lifecycle

import (
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// The fingerprints and Of read the same: from each of a set of starting
// points, every single change of a field Of reads that changes what Of
// says also changes a fingerprint, so a controller filtering its events
// by them (the queue condition's) is woken. A field Of comes to read that
// the fingerprints leave out fails here, not in a cluster where the
// condition is left saying the old state.
func TestEveryChangeOfWhatOfSaysChangesAFingerprint(t *testing.T) {
	pending := cond(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, "Pending", "couldn't assign flavors")
	admitted := func(wl *kueue.Workload) {
		reserved(wl)
		cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, "Admitted", "")(wl)
	}
	starts := map[string]func() (*trainjob.TrainJob, *kueue.Workload){
		"queued":   func() (*trainjob.TrainJob, *kueue.Workload) { return job(), workload(pending) },
		"admitted": func() (*trainjob.TrainJob, *kueue.Workload) { return job(), workload(admitted) },
		"held for its runtime": func() (*trainjob.TrainJob, *kueue.Workload) {
			return job(), workload(pending, func(wl *kueue.Workload) {
				wl.Spec.Active = ptr.To(false)
				wl.Annotations = map[string]string{names.HeldForRuntimeAnnotation: "TrainingRuntime ns/torch"}
			})
		},
		"held by a policy": func() (*trainjob.TrainJob, *kueue.Workload) {
			return job(), workload(pending, func(wl *kueue.Workload) {
				wl.Spec.Active = ptr.To(false)
				wl.Annotations = map[string]string{names.HeldByPolicyAnnotation: `{"policy":"cost-center","since":"2026-12-07T05:00:00Z","attempt":1}`}
			})
		},
	}
	changes := map[string]func(*trainjob.TrainJob, *kueue.Workload){
		"preempted once (schedulingStats)": func(_ *trainjob.TrainJob, wl *kueue.Workload) {
			wl.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{{Reason: kueue.WorkloadEvictedByPreemption, Count: 1}}}
		},
		"evicted": func(_ *trainjob.TrainJob, wl *kueue.Workload) {
			apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: kueue.WorkloadEvictedByPreemption})
		},
		"finished": func(_ *trainjob.TrainJob, wl *kueue.Workload) {
			apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: kueue.WorkloadFinishedReasonSucceeded})
		},
		"deactivated": func(_ *trainjob.TrainJob, wl *kueue.Workload) { wl.Spec.Active = ptr.To(false) },
		"reactivated": func(_ *trainjob.TrainJob, wl *kueue.Workload) { wl.Spec.Active = nil; wl.Annotations = nil },
		"another runtime held": func(_ *trainjob.TrainJob, wl *kueue.Workload) {
			setIf(wl, names.HeldForRuntimeAnnotation, "TrainingRuntime ns/other")
		},
		"the policy refused again": func(_ *trainjob.TrainJob, wl *kueue.Workload) {
			setIf(wl, names.HeldByPolicyAnnotation, `{"policy":"cost-center","since":"2026-12-07T05:00:00Z","attempt":2}`)
		},
		"on a worker": func(_ *trainjob.TrainJob, wl *kueue.Workload) { wl.Status.ClusterName = ptr.To("worker-1") },
		"another queue": func(j *trainjob.TrainJob, wl *kueue.Workload) {
			j.Labels[constants.QueueLabel] = "lq2"
			wl.Spec.QueueName = "lq2"
		},
		"admitted elsewhere": func(_ *trainjob.TrainJob, wl *kueue.Workload) {
			if wl.Status.Admission != nil {
				wl.Status.Admission.ClusterQueue = "cpus"
			}
		},
		"started":   func(j *trainjob.TrainJob, _ *kueue.Workload) { j.Spec.Suspend = ptr.To(false) },
		"suspended": func(j *trainjob.TrainJob, _ *kueue.Workload) { j.Spec.Suspend = ptr.To(true) },
		"completed": func(j *trainjob.TrainJob, _ *kueue.Workload) {
			apimeta.SetStatusCondition(&j.Status.Conditions, metav1.Condition{Type: "Complete", Status: metav1.ConditionTrue, Reason: "JobsCompleted"})
		},
		"managed elsewhere": func(j *trainjob.TrainJob, _ *kueue.Workload) { j.Spec.ManagedBy = ptr.To("example.com/other") },
	}
	for start, make := range starts {
		for change, apply := range changes {
			j, wl := make()
			before := Of(Observed{Job: j, Workload: wl})
			fingerprint := JobFingerprint(j) + "||" + WorkloadFingerprint(wl)
			apply(j, wl)
			if after := Of(Observed{Job: j, Workload: wl}); after != before && JobFingerprint(j)+"||"+WorkloadFingerprint(wl) == fingerprint {
				t.Errorf("%s, then %s: Of says %s (%s) instead of %s (%s), and neither fingerprint changed", start, change, after.State, after.Reason, before.State, before.Reason)
			}
		}
	}
}

// setIf changes an annotation the Workload has.
func setIf(wl *kueue.Workload, key, value string) {
	if _, ok := wl.Annotations[key]; ok {
		wl.Annotations[key] = value
	}
}
