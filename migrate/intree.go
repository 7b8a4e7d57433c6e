package migrate

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueuetrainjob "sigs.k8s.io/kueue/pkg/controller/jobs/trainjob"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	trainerruntimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// PodSetsOf computes a job's PodSets as one integration does.
type PodSetsOf func(ctx context.Context, job *trainjob.TrainJob) ([]kueue.PodSet, error)

// InTreePodSets computes PodSets as Kueue's built-in TrainJob integration
// does, with its own code (Kueue v0.19.2's, which this binary links, with
// the Trainer runtime framework it links): from the live
// (Cluster)TrainingRuntime read through c, defaulted by a dry-run create
// of a Workload (nothing is stored). It initializes Trainer's runtime
// registry, as Kueue's integration does at its start.
func InTreePodSets(ctx context.Context, c client.Client) (PodSetsOf, error) {
	if _, err := trainerruntimecore.New(ctx, c, noIndexes{}, nil); err != nil {
		return nil, fmt.Errorf("initializing Trainer's runtime framework as Kueue's built-in integration does: %w", err)
	}
	return func(ctx context.Context, job *trainjob.TrainJob) ([]kueue.PodSet, error) {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
		if err != nil {
			return nil, err
		}
		theirs := &trainer.TrainJob{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, theirs); err != nil {
			return nil, fmt.Errorf("reading TrainJob %s/%s as Kueue's integration does: %w", job.Namespace, job.Name, err)
		}
		return (*kueuetrainjob.TrainJob)(theirs).PodSets(ctx, c)
	}, nil
}

// noIndexes: the runtime framework registers field indexes for its
// controllers; computing PodSets reads none of them.
type noIndexes struct{}

func (noIndexes) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}
