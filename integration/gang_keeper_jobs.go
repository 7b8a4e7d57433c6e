package integration

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// runningJobs tell the gang keeper about the TrainJobs that run here on
// Kueue's admission, from the same observation a reconcile makes.
type runningJobs struct{ deps *deps }

var _ gang.Jobs = runningJobs{}

func (r runningJobs) Running(ctx context.Context, key types.NamespacedName) (*gang.Running, error) {
	job := &trainjob.TrainJob{}
	if err := r.deps.client.Get(ctx, key, job); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	runner := job.Runner()
	if runner != trainjob.RunLocally || job.Suspended() {
		return nil, nil
	}
	if _, _, finished := job.Finished(); finished {
		return nil, nil
	}
	obs, err := r.deps.observe(ctx, job, runner)
	if err != nil {
		return nil, err
	}
	// Only jobs Kueue admitted: a TrainJob outside Kueue is Trainer's alone.
	wl := obs.reserved()
	// The job reconciler reports runtime problems (a running job does not
	// even need its runtime any more); without roles there is nothing to
	// size, and nothing to say twice. Roles from a runtime edited since
	// the admission don't describe the pods that run: leave the gang be.
	if wl == nil || obs.runtimeErr != nil || !quota.SameDemand(wl.Spec.PodSets, obs.PodSets) {
		return nil, nil
	}
	progress, err := r.deps.gangProgress(ctx, job, obs)
	if err != nil {
		return nil, err
	}
	return &gang.Running{
		Job:         job,
		Roles:       obs.Roles,
		TrainerGang: obs.Coscheduling != nil,
		Progress:    progress,
		AdmittedAt:  obs.admittedAt().Time,
	}, nil
}

// NewGangKeeper keeps the PodGroups of the TrainJobs r runs (opts.Gangs.PodGroupCRD:
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
