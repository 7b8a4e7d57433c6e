package integration

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// What explain/ reads as the reconciler reads it, so that an explanation
// computes the roles the admission does.

// JobRuntimeSpec is the runtime Trainer builds job from: on a Trainer that
// snapshots runtimes (v2.3), the job's snapshot once Trainer took it, the
// live runtime before; the live runtime on earlier releases. A reader who
// may not read ConfigMaps gets the live runtime, and snapshotted false.
func JobRuntimeSpec(ctx context.Context, c client.Reader, job *trainjob.TrainJob, rules podsets.Rules) (spec *trainer.TrainingRuntimeSpec, snapshotted bool, err error) {
	if rules.RuntimeSnapshot && job.UID != "" {
		rt, found, err := readSnapshot(ctx, c, nil, job)
		switch {
		case err == nil && found:
			return rt, true, nil
		case err != nil && !apierrors.IsForbidden(err):
			return nil, false, err
		}
	}
	rt, err := runtimeSpec(ctx, c, job)
	return rt, false, err
}
