package integration

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// patchGuarded sends ops as one JSON Patch that first tests the
// resourceVersion we read. The override lists are atomic, so any change we
// did not see must make the write fail (and the reconcile retry on fresh
// data) rather than be overwritten. On success, into holds the new object.
func patchGuarded(ctx context.Context, c client.Client, job *trainer.TrainJob, ops []shape.Op, into *trainer.TrainJob) error {
	guarded := make([]shape.Op, 0, len(ops)+1)
	guarded = append(guarded, shape.Op{Op: "test", Path: "/metadata/resourceVersion", Value: job.ResourceVersion})
	guarded = append(guarded, ops...)
	data, err := json.Marshal(guarded)
	if err != nil {
		return fmt.Errorf("encoding patch: %w", err)
	}
	job.DeepCopyInto(into)
	if err := c.Patch(ctx, into, client.RawPatch(types.JSONPatchType, data)); err != nil {
		return fmt.Errorf("patching TrainJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	return nil
}

// setSuspend sets spec.suspend alone. A merge patch is safe here: it names
// one scalar and cannot clobber anything else.
func setSuspend(ctx context.Context, c client.Client, job *trainer.TrainJob, suspend bool) error {
	data := fmt.Appendf(nil, `{"spec":{"suspend":%t}}`, suspend)
	if err := c.Patch(ctx, job, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("setting spec.suspend=%t on TrainJob %s/%s: %w", suspend, job.Namespace, job.Name, err)
	}
	return nil
}
