package integration

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// What explain/ reads as the reconciler reads it, so that an explanation
// computes the roles the admission does.

// TrainJobCRD names Trainer's TrainJob CRD, whose schema DetectShape reads.
const TrainJobCRD = trainJobCRD

// RuntimeSpec reads the runtime job refers to. A runtimeRef we do not
// support, or a runtime that does not exist, is an error saying what to fix.
func RuntimeSpec(ctx context.Context, c client.Reader, job *trainjob.TrainJob) (*trainer.TrainingRuntimeSpec, error) {
	return runtimeSpec(ctx, c, job)
}
