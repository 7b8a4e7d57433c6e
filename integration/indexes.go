package integration

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// runtimeIndex finds the TrainJobs that use a runtime.
const runtimeIndex = "trainjob-kueue.dev/runtime"

// SetupIndexes registers the field indexes the reconciler reads through:
// Workloads by owning TrainJob (the job framework's), TrainJobs by runtime.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := jobframework.SetupWorkloadOwnerIndex(ctx, indexer, GVK); err != nil {
		return fmt.Errorf("indexing Workloads by TrainJob: %w", err)
	}
	if err := indexer.IndexField(ctx, &trainer.TrainJob{}, runtimeIndex, func(o client.Object) []string {
		ref, err := refOf(o.(*trainer.TrainJob))
		if err != nil {
			return nil
		}
		return []string{ref.indexKey()}
	}); err != nil {
		return fmt.Errorf("indexing TrainJobs by runtime: %w", err)
	}
	return nil
}
