package integration

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// NewScheme holds every type the manager reads or writes.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(kueue.AddToScheme(s))
	utilruntime.Must(trainjob.AddToScheme(s))
	utilruntime.Must(jobsetapi.AddToScheme(s))
	utilruntime.Must(schedv1alpha1.AddToScheme(s))
	return s
}

// Setup registers the indexes, the reconciler and the PodGroup keeper of
// the integration with mgr (package webhook registers its webhook).
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if opts.Recorder == nil {
		r, err := NewEventRecorder(mgr)
		if err != nil {
			return err
		}
		opts.Recorder = r
	}
	rec := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), opts.Recorder, opts)
	if err := rec.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the TrainJob reconciler: %w", err)
	}
	// Every cluster may be a MultiKueue worker: one watch of Workloads
	// MultiKueue creates here, already cached.
	if err := NewDispatchedHere(mgr.GetClient(), opts.Recorder).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the dispatched Workloads' controller: %w", err)
	}
	if opts.MultiKueue {
		workers := NewWorkerClients(mgr.GetAPIReader(), mgr.GetScheme(), opts.KueueNamespace)
		if err := NewDispatchWord(mgr.GetClient(), workers, opts.Recorder, opts.MultiKueueOrigin).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the dispatch word: %w", err)
		}
	}
	if opts.PodGroups {
		keeper := gang.NewKeeper(gang.KeeperOptions{
			Client: mgr.GetClient(),
			Jobs:   runningJobs{rec.deps},
			Say: func(job *trainjob.TrainJob, reason, msg string) {
				rec.deps.speak(job, normal(reason, actionGang, msg))
			},
			Counted:       rec.deps.metrics.Gang,
			RetryInterval: opts.GangRetryInterval,
			JobSets:       rec.deps.caps.NoJobsStatus,
		})
		if err := keeper.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the PodGroup keeper: %w", err)
		}
	}
	return nil
}
