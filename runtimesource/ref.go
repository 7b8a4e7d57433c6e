package runtimesource

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
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

// RefOf is the runtime job names; an *Error when it names a kind Trainer
// has no runtime of.
func RefOf(job *trainjob.TrainJob) (Ref, error) {
	group := ptr.Deref(job.Spec.RuntimeRef.APIGroup, trainer.GroupVersion.Group)
	kind := ptr.Deref(job.Spec.RuntimeRef.Kind, kindClusterTrainingRuntime)
	if group != trainer.GroupVersion.Group || (kind != kindTrainingRuntime && kind != kindClusterTrainingRuntime) {
		return Ref{}, &Error{
			Reason: ReasonUnsupportedRuntime,
			Message: fmt.Sprintf("spec.runtimeRef names %s.%s: only %s and %s of group %s are supported",
				kind, group, kindTrainingRuntime, kindClusterTrainingRuntime, trainer.GroupVersion.Group),
		}
	}
	ref := Ref{Kind: kind, Name: job.Spec.RuntimeRef.Name}
	if kind == kindTrainingRuntime {
		ref.Namespace = job.Namespace
	}
	return ref, nil
}

// Live reads the runtime job names as it is now, through c, and names its
// version: its reference and resourceVersion. A runtime that does not exist
// is an *Error of ReasonRuntimeNotFound.
func Live(ctx context.Context, c client.Reader, job *trainjob.TrainJob) (spec *trainer.TrainingRuntimeSpec, version string, err error) {
	ref, err := RefOf(job)
	if err != nil {
		return nil, "", err
	}
	var rv string
	if ref.Kind == kindTrainingRuntime {
		var rt trainer.TrainingRuntime
		err = c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &rt)
		spec, rv = &rt.Spec, rt.ResourceVersion
	} else {
		var rt trainer.ClusterTrainingRuntime
		err = c.Get(ctx, client.ObjectKey{Name: ref.Name}, &rt)
		spec, rv = &rt.Spec, rt.ResourceVersion
	}
	if apierrors.IsNotFound(err) {
		return nil, "", &Error{
			Reason:  ReasonRuntimeNotFound,
			Message: fmt.Sprintf("%s named in spec.runtimeRef does not exist: create it (the job stays queued and proceeds once it exists) or point spec.runtimeRef at an existing runtime", ref),
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", ref, err)
	}
	return spec, ref.String() + "@" + rv, nil
}

// IsNotFound: err says the job's runtime does not exist.
func IsNotFound(err error) bool {
	var rtErr *Error
	return errors.As(err, &rtErr) && rtErr.Reason == ReasonRuntimeNotFound
}
