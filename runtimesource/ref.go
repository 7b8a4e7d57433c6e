package integration

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

const (
	kindTrainingRuntime        = trainer.TrainingRuntimeKind
	kindClusterTrainingRuntime = trainer.ClusterTrainingRuntimeKind
)

// runtimeRef is the runtime a TrainJob names, with Trainer's defaults applied.
type runtimeRef struct {
	Kind      string
	Namespace string // empty for ClusterTrainingRuntime
	Name      string
}

func (r runtimeRef) String() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s", r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name)
}

// indexKey is the value of the TrainJob runtime index for this runtime.
func (r runtimeRef) indexKey() string {
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// errRuntime is a runtime problem the user has to fix; retrying won't help
// until the runtime (or the job) changes, which our runtime watch notices.
type errRuntime struct {
	reason string
	msg    string
}

func (e *errRuntime) Error() string { return e.msg }

func refOf(job *trainjob.TrainJob) (runtimeRef, error) {
	group := ptr.Deref(job.Spec.RuntimeRef.APIGroup, trainer.GroupVersion.Group)
	kind := ptr.Deref(job.Spec.RuntimeRef.Kind, kindClusterTrainingRuntime)
	if group != trainer.GroupVersion.Group || (kind != kindTrainingRuntime && kind != kindClusterTrainingRuntime) {
		return runtimeRef{}, &errRuntime{
			reason: ReasonUnsupportedRuntime,
			msg: fmt.Sprintf("spec.runtimeRef names %s.%s: only %s and %s of group %s are supported",
				kind, group, kindTrainingRuntime, kindClusterTrainingRuntime, trainer.GroupVersion.Group),
		}
	}
	ref := runtimeRef{Kind: kind, Name: job.Spec.RuntimeRef.Name}
	if kind == kindTrainingRuntime {
		ref.Namespace = job.Namespace
	}
	return ref, nil
}

// runtimeSpec reads the runtime job refers to, from the informer cache.
func runtimeSpec(ctx context.Context, c client.Reader, job *trainjob.TrainJob) (*trainer.TrainingRuntimeSpec, error) {
	spec, _, err := runtimeVersion(ctx, c, job)
	return spec, err
}

// runtimeVersion also names the runtime's version: its reference and
// resourceVersion.
func runtimeVersion(ctx context.Context, c client.Reader, job *trainjob.TrainJob) (*trainer.TrainingRuntimeSpec, string, error) {
	ref, err := refOf(job)
	if err != nil {
		return nil, "", err
	}
	var spec *trainer.TrainingRuntimeSpec
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
		return nil, "", &errRuntime{
			reason: ReasonRuntimeNotFound,
			msg:    fmt.Sprintf("%s named in spec.runtimeRef does not exist: create it (the job stays queued and proceeds once it exists) or point spec.runtimeRef at an existing runtime", ref),
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", ref, err)
	}
	return spec, ref.String() + "@" + rv, nil
}
