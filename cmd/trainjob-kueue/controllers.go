package main

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/multikueue"
	"github.com/trainjob-kueue/trainjob-kueue/priorityboost"
	"github.com/trainjob-kueue/trainjob-kueue/queuecondition"
	"github.com/trainjob-kueue/trainjob-kueue/restartwatch"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/standby"
	tjwebhook "github.com/trainjob-kueue/trainjob-kueue/webhook"
)

// wiring is which optional parts the manager runs (its flags).
type wiring struct {
	// webhook: serve the webhooks (--disable-webhook off).
	webhook bool
	// queueCondition: keep the queue condition on TrainJobs
	// (--queue-condition).
	queueCondition bool
}

// A controller is one reconciler or webhook the manager runs; its name is
// said when its setup fails.
type controller struct {
	name  string
	setup func(ctrl.Manager) error
}

// controllers lists every controller and webhook the manager runs, in
// the mode opts give, in the order they are set up. opts.Recorder is the
// one recorder they share.
//
// While Kueue runs its built-in TrainJob integration (standby) only the
// hand-back of stopped jobs and the webhooks run: a queued TrainJob is
// suspended whichever integration runs it, so none starts unqueued while
// the two hand over.
func controllers(ctx context.Context, mgr ctrl.Manager, opts integration.Options, w wiring) []controller {
	c := mgr.GetClient()
	var list []controller
	if opts.BuiltInTrainJob {
		list = append(list, controller{"the hand-back of stopped jobs to Kueue's built-in integration", standby.NewHandBack(standby.HandBackOptions{
			Client: c, Fresh: mgr.GetAPIReader(), Recorder: opts.Recorder, Shape: opts.Shape, ManageJobsWithoutQueueName: opts.ManageJobsWithoutQueueName,
		}).SetupWithManager})
	} else {
		rec := integration.NewReconciler(c, mgr.GetAPIReader(), opts.Recorder, opts)
		boosts := priorityboost.New(priorityboost.Options{Client: c, Runtimes: opts.Runtimes, Recorder: opts.Recorder, Metrics: opts.Metrics, GateOn: opts.PriorityBoost})
		list = append(list,
			controller{"the TrainJob indexes", func(m ctrl.Manager) error { return integration.SetupIndexes(ctx, m.GetFieldIndexer()) }},
			controller{"the TrainJob reconciler (Kueue's job framework)", rec.SetupWithManager},
			// Every cluster may be a MultiKueue worker: one watch of the
			// Workloads MultiKueue creates here, already cached.
			controller{"MultiKueue's name clashes on this cluster as a worker", multikueue.NewNameClashes(c, opts.Recorder).SetupWithManager},
		)
		if opts.MultiKueue {
			workers := multikueue.NewWorkerClients(mgr.GetAPIReader(), mgr.GetScheme(), opts.KueueNamespace)
			list = append(list, controller{"MultiKueue's worker refusals on this manager", multikueue.NewWorkerRefusals(c, workers, opts.Recorder, opts.MultiKueueOrigin).SetupWithManager})
		}
		if opts.Gangs.PodGroupCRD {
			list = append(list, controller{"the PodGroup keeper", integration.NewGangKeeper(c, rec, opts).SetupWithManager})
		}
		list = append(list,
			controller{"the priority boost of preemption-cost policies", boosts.SetupWithManager},
			controller{"the ClusterQueue preemption-cost warner", priorityboost.NewWarner(c, opts.Recorder, opts.PriorityBoost).SetupWithManager},
		)
	}
	// The queue condition reads the job and its Workload, whichever
	// integration keeps them: in both modes, so it never goes stale
	// across a switch.
	if w.queueCondition {
		list = append(list, controller{"the queue condition on TrainJobs", queuecondition.New(queuecondition.Options{
			Client: c, Recorder: opts.Recorder, ManageJobsWithoutQueueName: opts.ManageJobsWithoutQueueName,
		}).SetupWithManager})
	}
	if w.webhook {
		list = append(list,
			controller{"the TrainJob webhook", func(m ctrl.Manager) error { return tjwebhook.Setup(m, opts.Shared) }},
			controller{"the ClusterQueue webhook", func(m ctrl.Manager) error {
				return tjwebhook.SetupClusterQueues(m, opts.Gangs)
			}},
			controller{"the JobSet webhook (no TrainJob's JobSet queued on its own)", tjwebhook.SetupJobSets},
			controller{"the Job webhook (no Job of a TrainJob's JobSet queued on its own)", tjwebhook.SetupJobs},
			controller{"the Pod webhook (no TrainJob's pod queued on its own)", tjwebhook.SetupPods},
		)
	}
	return list
}

// restartWatchers stop the run (stop) when what it learned at start no
// longer holds: an in-place Trainer upgrade that changes the TrainJob
// shape, Kueue's built-in TrainJob integration turned on or off, or
// scheduler-plugins' PodGroup CRD installed or removed; the
// process then runs again in the mode it finds. In every mode, and set up
// first, before the certificate wait (main.go's watchRestarts): a mode
// change must be seen even while the webhook certificate is awaited.
func restartWatchers(f flags, s settings.Shared, stop func(error)) []controller {
	return []controller{
		{"the watch of the TrainJob shape (an in-place Trainer upgrade)", func(m ctrl.Manager) error {
			return restartwatch.WatchShape(m, s.Shape, stop)
		}},
		{"the watch of Kueue's built-in TrainJob integration (turned on or off)", func(m ctrl.Manager) error {
			return restartwatch.WatchBuiltIn(m, f.kueueConfig, s.BuiltInTrainJob, builtInCheckInterval, stop)
		}},
		{"the watch of scheduler-plugins' PodGroup CRD (installed or removed)", func(m ctrl.Manager) error {
			return restartwatch.WatchPodGroups(m, s.Gangs.PodGroupCRD, stop)
		}},
	}
}

// setup builds the recorder and the runtime source the controllers share,
// and sets up each controller, naming the one that failed.
func setup(ctx context.Context, mgr ctrl.Manager, opts integration.Options, w wiring) error {
	r, err := integration.NewEventRecorder(mgr)
	if err != nil {
		return fmt.Errorf("setting up the event recorder: %w", err)
	}
	opts.Recorder = r
	// One source of runtimes and PodSets, one memo, for the integration and
	// the priority boost (whose jobs are among the integration's).
	opts.Runtimes = runtimesource.New(mgr.GetClient(), mgr.GetAPIReader(), runtimesource.Options{Shape: opts.Shape, PodSets: opts.PodSets})
	for _, c := range controllers(ctx, mgr, opts, w) {
		if err := c.setup(mgr); err != nil {
			return fmt.Errorf("setting up %s: %w", c.name, err)
		}
	}
	return nil
}

// syncReads makes the informers of what the webhooks read and waits until
// they, and every informer made so far, are synced; false when ctx ends
// first or an informer cannot be made (said in the log: the replica then
// never becomes ready, rather than refusing calls).
func syncReads(ctx context.Context, mgr ctrl.Manager, opts integration.Options, withWebhook bool) bool {
	if withWebhook {
		for _, o := range tjwebhook.CachedReads() {
			if _, err := mgr.GetCache().GetInformer(ctx, o, cache.BlockUntilSynced(false)); err != nil {
				ctrl.Log.WithName("setup").Error(err, "Making the informer of what the webhooks read: this replica stays unready", "kind", fmt.Sprintf("%T", o))
				return false
			}
		}
	}
	return mgr.GetCache().WaitForCacheSync(ctx)
}
