package priorityboost

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// signalsOf are what job, its roles (nil when they can't be computed) and
// its Workload tell, at now, of what losing the job would cost.
func signalsOf(job *trainjob.TrainJob, roles []podsets.Role, wl *kueue.Workload, now time.Time) preemptcost.Signals {
	s := preemptcost.Signals{Training: training(job, roles), Preemptions: preemptcost.Preemptions(wl)}
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue {
		run := int64(now.Sub(c.LastTransitionTime.Time) / time.Second)
		s.RunSeconds = &run
	}
	if ts := job.Status.TrainerStatus; ts != nil {
		s.ProgressPercent = ts.ProgressPercentage
		s.RemainingSeconds = ts.EstimatedRemainingSeconds
	}
	return s
}

// training: every initializer of the job completed, so its trainer phase
// began. A job whose roles can't be computed is taken as not training:
// its progress is not believed.
func training(job *trainjob.TrainJob, roles []podsets.Role) bool {
	if roles == nil {
		return false
	}
	succeeded := map[string]int32{}
	for _, s := range job.Status.JobsStatus {
		succeeded[s.Name] = ptr.Deref(s.Succeeded, 0)
	}
	for _, r := range roles {
		if r.IsInitializer() && succeeded[r.Name] < r.Replicas {
			return false
		}
	}
	return true
}
