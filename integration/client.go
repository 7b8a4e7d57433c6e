package integration

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// skipEmptyPatches is the client the job framework writes through. After
// RunWithPodSetsInfo the framework always patches the job with what changed
// in memory; when we already started the job in one request ourselves,
// nothing did, and sending "{}" would be a request for nothing.
type skipEmptyPatches struct{ client.Client }

func (c skipEmptyPatches) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if patch.Type() == types.MergePatchType {
		if data, err := patch.Data(obj); err == nil && string(data) == "{}" {
			return nil
		}
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}
