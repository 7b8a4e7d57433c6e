package integration

import (
	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewGangKeeper keeps the PodGroups of the TrainJobs r runs (opts.PodGroups:
// scheduler-plugins' PodGroup CRD is installed), saying what it does on
// the jobs through r's events.
func NewGangKeeper(c client.Client, r *Reconciler, opts Options) *gang.Keeper {
	return gang.NewKeeper(gang.KeeperOptions{
		Client: c,
		Jobs:   runningJobs{r.deps},
		Say: func(job *trainjob.TrainJob, reason, msg string) {
			r.deps.speak(job, normal(reason, actionGang, msg))
		},
		Counted:       r.deps.metrics.Gang,
		RetryInterval: opts.GangRetryInterval,
		JobSets:       r.deps.caps.NoJobsStatus,
	})
}
