package integration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Trainer v2.3's runtime snapshot (pkg/runtime/core/snapshot.go): at a
// job's first reconcile it copies the runtime, as YAML under one key, into
// a ConfigMap the job controls, and builds the job from that copy ever
// after. A runtime edited while the job queues changes nothing about the
// pods, so neither may it change the quota booked for them.
const (
	snapshotSuffix = "-runtime-snapshot"
	snapshotKey    = "runtime"
)

// readSnapshot reads the job's runtime snapshot from the API server (we keep
// no ConfigMap cache: a cluster's ConfigMaps are many and ours are few, and
// a snapshot never changes once taken, so its projection is memoised).
// found is false while Trainer has not taken one yet.
func readSnapshot(ctx context.Context, r client.Reader, job *trainjob.TrainJob) (spec *trainer.TrainingRuntimeSpec, found bool, err error) {
	cm := &corev1.ConfigMap{}
	err = r.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: job.Name + snapshotSuffix}, cm)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the runtime snapshot of TrainJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	spec, err = decodeSnapshot(cm, job)
	if err != nil {
		return nil, false, err
	}
	return spec, true, nil
}

// decodeSnapshot checks the snapshot the way Trainer does before it uses
// one, so a snapshot Trainer would refuse is refused here too, and returns
// the runtime's spec.
func decodeSnapshot(cm *corev1.ConfigMap, job *trainjob.TrainJob) (*trainer.TrainingRuntimeSpec, error) {
	invalid := func(format string, a ...any) error {
		return &errRuntime{
			reason: ReasonInvalidRuntime,
			msg: fmt.Sprintf("the runtime snapshot ConfigMap %s, which Trainer builds this job from, "+format+
				"; Trainer will not run the job either: delete the ConfigMap so Trainer takes a new snapshot of the runtime", append([]any{cm.Name}, a...)...),
		}
	}
	if owner := metav1.GetControllerOfNoCopy(cm); owner == nil || owner.UID != job.UID {
		return nil, invalid("is not controlled by this TrainJob")
	}
	data, ok := cm.Data[snapshotKey]
	if !ok {
		return nil, invalid("has no %q key", snapshotKey)
	}
	// TrainingRuntime and ClusterTrainingRuntime share their spec.
	var rt trainer.TrainingRuntime
	if err := yaml.Unmarshal([]byte(data), &rt); err != nil {
		return nil, invalid("does not hold a runtime: %v", err)
	}
	if rt.Name != job.Spec.RuntimeRef.Name {
		return nil, invalid("holds runtime %q, but spec.runtimeRef names %q", rt.Name, job.Spec.RuntimeRef.Name)
	}
	if kind := job.Spec.RuntimeRef.Kind; kind != nil && rt.Kind != "" && rt.Kind != *kind {
		return nil, invalid("holds a %s, but spec.runtimeRef names a %s", rt.Kind, *kind)
	}
	return &rt.Spec, nil
}
