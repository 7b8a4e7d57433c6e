package integration

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// SetupIndexes registers the field indexes the reconciler reads through:
// Workloads by owning TrainJob (the job framework's), TrainJobs by runtime.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := setupFrameworkIndexes(ctx, indexer); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &trainjob.TrainJob{}, names.RuntimeIndex, runtimeIndexKeys); err != nil {
		return fmt.Errorf("indexing TrainJobs by runtime: %w", err)
	}
	return nil
}

// runtimeIndexKeys index a TrainJob by the runtime it names; a job naming
// no kind of runtime is not indexed (no runtime event concerns it).
func runtimeIndexKeys(o client.Object) []string {
	ref, err := runtimesource.RefOf(o.(*trainjob.TrainJob))
	if err != nil {
		return nil
	}
	return []string{ref.IndexKey()}
}
