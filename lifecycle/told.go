package lifecycle

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// OnlyToldChanged: job differs from old only in the condition that tells
// its state (names.AdmittedCondition) and in what that write moved (the
// resourceVersion, managedFields). No controller but the condition's own
// reads it, so such an update is news to none of them: each queued job gets
// one such write, and passed on it would be a whole reconcile of the
// integration for nothing, 15,000 of them at Kueue's harness scale. A
// resync (the same resourceVersion) is not such an update.
func OnlyToldChanged(old, job *trainjob.TrainJob) bool {
	if old == nil || job == nil || old.ResourceVersion == job.ResourceVersion {
		return false
	}
	return equality.Semantic.DeepEqual(untold(old), untold(job))
}

// untold is a shallow copy of job without the condition and the write's
// bookkeeping; job itself (the informer's) is left as it is.
func untold(job *trainjob.TrainJob) *trainjob.TrainJob {
	c := *job
	c.ResourceVersion = ""
	c.ManagedFields = nil
	c.Status.Conditions = slices.DeleteFunc(slices.Clone(job.Status.Conditions), func(x metav1.Condition) bool {
		return x.Type == names.AdmittedCondition
	})
	if len(c.Status.Conditions) == 0 {
		c.Status.Conditions = nil // a list created for the condition alone
	}
	return &c
}
