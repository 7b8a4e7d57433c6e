package runtimesource

import (
	"errors"
	"fmt"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// Reasons of the runtime problems a job's owner has to fix, as the events
// that tell them say. Stable: users and alerts match on them.
const (
	ReasonRuntimeNotFound    = "RuntimeNotFound"
	ReasonUnsupportedRuntime = "UnsupportedRuntime"
	ReasonInvalidRuntime     = "InvalidRuntime"
)

const (
	kindTrainingRuntime        = trainer.TrainingRuntimeKind
	kindClusterTrainingRuntime = trainer.ClusterTrainingRuntimeKind
)

// Error is a runtime problem the job's owner has to fix; retrying won't
// help until the runtime (or the job) changes, which is watched.
type Error struct {
	// Reason is the event reason that tells it.
	Reason string
	// Message names the object and the fix.
	Message string
}

func (e *Error) Error() string { return e.Message }

// Ref is the runtime a TrainJob names, with Trainer's defaults applied.
type Ref struct {
	Kind      string
	Namespace string // empty for ClusterTrainingRuntime
	Name      string
}

func (r Ref) String() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s", r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name)
}

// IndexKey is the value of a TrainJob index by runtime for this runtime.
func (r Ref) IndexKey() string {
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// IsNotFound: err says the job's runtime does not exist.
func IsNotFound(err error) bool {
	var rtErr *Error
	return errors.As(err, &rtErr) && rtErr.Reason == ReasonRuntimeNotFound
}
