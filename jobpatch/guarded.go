// Package jobpatch is how a TrainJob is written: a JSON Patch of exactly
// the operations we own, guarded by the resourceVersion they were rendered
// from, and the reading of the API server's answer (a race to retry, or a
// refusal the job's owner or the admin must act on). The job framework's
// start and stop (integration/), the hand-back to Kueue's built-in
// integration (standby/) and the queue condition on the job's status
// (queuecondition/, GuardedStatus) write through it; never a full Update.
package jobpatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Guarded writes the operations opsFor renders for job as one JSON
// Patch that first tests the resourceVersion they were rendered from. The
// override lists are atomic: a change we did not see must fail the write,
// never be overwritten. When our copy is stale (the informer lags, or
// Trainer wrote meanwhile), it reads the job afresh from fresh (the API
// server) and renders again, a few times, before giving up; with fresh nil
// it gives up at once (Stale), for a caller that waits for its cache to
// catch up rather than read live. job ends up as the server has it; no
// request is sent when opsFor has nothing to do.
func Guarded(ctx context.Context, c client.Client, fresh client.Reader, job *trainjob.TrainJob, opsFor func(*trainjob.TrainJob) []shape.Op) (bool, error) {
	return guarded(ctx, func(obj client.Object, p client.Patch) error { return c.Patch(ctx, obj, p) }, fresh, job, opsFor)
}

// GuardedStatus is Guarded for the job's status subresource: the
// operations' paths are under /status.
func GuardedStatus(ctx context.Context, c client.Client, fresh client.Reader, job *trainjob.TrainJob, opsFor func(*trainjob.TrainJob) []shape.Op) (bool, error) {
	return guarded(ctx, func(obj client.Object, p client.Patch) error { return c.Status().Patch(ctx, obj, p) }, fresh, job, opsFor)
}

// guarded is Guarded's loop, sending each patch with send.
func guarded(ctx context.Context, send func(client.Object, client.Patch) error, fresh client.Reader, job *trainjob.TrainJob, opsFor func(*trainjob.TrainJob) []shape.Op) (bool, error) {
	const attempts = 3
	for i := 0; ; i++ {
		ops := opsFor(job)
		if ops == nil {
			return false, nil
		}
		guarded := make([]shape.Op, 0, len(ops)+1)
		guarded = append(guarded, shape.Op{Op: "test", Path: "/metadata/resourceVersion", Value: job.ResourceVersion})
		guarded = append(guarded, ops...)
		data, err := json.Marshal(guarded)
		if err != nil {
			return false, fmt.Errorf("encoding patch: %w", err)
		}
		into := job.DeepCopy()
		err = send(into, client.RawPatch(types.JSONPatchType, data))
		if err == nil {
			into.DeepCopyInto(job)
			return true, nil
		}
		if !Stale(err) || i == attempts-1 || fresh == nil {
			return false, fmt.Errorf("patching TrainJob %s/%s: %w", job.Namespace, job.Name, err)
		}
		if err := fresh.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, fmt.Errorf("reading TrainJob %s/%s: %w", job.Namespace, job.Name, err)
		}
	}
}

// Stale: our precondition failed because the object moved on.
func Stale(err error) bool {
	return apierrors.IsConflict(err) || preconditionFailed(err)
}

// preconditionFailed: the "test" operation of a JSON Patch failed. The API
// server answers it with a bare 422, naming no kind and no field; a
// validation refusal is a 422 too, but names the object and its fields.
func preconditionFailed(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	if s.Reason != metav1.StatusReasonInvalid || strings.Contains(s.Message, "denied") {
		// A webhook may deny with a bare 422 too, but says it denied.
		return false
	}
	return s.Details == nil || (s.Details.Kind == "" && len(s.Details.Causes) == 0)
}

// Refused: the API server's validation, a webhook or an admission policy
// refused what the write contains. The same write gets the same answer, so
// it is not retried as a race: the job owner or the admin must act.
func Refused(err error) bool {
	if preconditionFailed(err) {
		return false
	}
	if apierrors.IsInvalid(err) {
		return true
	}
	// RBAC forbids too, but that is the admin's to mend and may be mended
	// any time; only an admission denial is about the object.
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "denied")
}
