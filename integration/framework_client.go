package integration

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// frameworkClient is the client the job framework writes through. After
// RunWithPodSetsInfo the framework patches the job with what changed in
// memory, asserting the resourceVersion it read. Our start writes the job
// itself and leaves it in memory as read (RunWithPodSetsInfo), so that
// patch changes nothing: a request for nothing, not sent. Any other patch,
// or one that does change a field, goes to the API server as it is, but
// for the one status write at a wave's end (Status).
type frameworkClient struct{ client.Client }

func (c frameworkClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if patch.Type() == types.MergePatchType {
		if data, err := patch.Data(obj); err == nil && changesNothing(data) {
			return nil
		}
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

// Status is the status writer the job framework writes through: its
// reclaimable-pods apply carries the PodsReady condition at a wave's end
// (wave_end.go).
func (c frameworkClient) Status() client.SubResourceWriter {
	return frameworkStatusWriter{c.Client.Status()}
}

type frameworkStatusWriter struct{ client.SubResourceWriter }

func (w frameworkStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if withCond, ok := withPodsReady(ctx, obj, patch, opts); ok {
		opts = withCond
	}
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// changesNothing: a merge patch that is empty or only asserts
// metadata.resourceVersion.
func changesNothing(data []byte) bool {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(data, &p); err != nil {
		return false
	}
	if len(p) == 0 {
		return true
	}
	if len(p) != 1 || p["metadata"] == nil {
		return false
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(p["metadata"], &meta); err != nil {
		return false
	}
	_, rv := meta["resourceVersion"]
	return len(meta) == 1 && rv
}
