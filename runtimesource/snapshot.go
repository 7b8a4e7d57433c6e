package runtimesource

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"

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
func readSnapshot(ctx context.Context, r client.Reader, dec *snapshotDecoder, job *trainjob.TrainJob) (spec *trainer.TrainingRuntimeSpec, found bool, err error) {
	cm := &corev1.ConfigMap{}
	err = r.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: job.Name + snapshotSuffix}, cm)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the runtime snapshot of TrainJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	spec, err = decodeSnapshot(cm, job, dec)
	if err != nil {
		return nil, false, err
	}
	return spec, true, nil
}

// decodeSnapshot checks the snapshot the way Trainer does before it uses
// one, so a snapshot Trainer would refuse is refused here too, and returns
// the runtime's spec, shared with dec's other readers: read-only. A nil dec
// decodes afresh.
func decodeSnapshot(cm *corev1.ConfigMap, job *trainjob.TrainJob, dec *snapshotDecoder) (*trainer.TrainingRuntimeSpec, error) {
	invalid := func(format string, a ...any) error {
		return &Error{
			Reason: ReasonInvalidRuntime,
			Message: fmt.Sprintf("the runtime snapshot ConfigMap %s, which Trainer builds this job from, "+format+
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
	rt, err := dec.decode(data)
	if err != nil {
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

// snapshotDecoder decodes runtime snapshots, remembering the last few by
// content. Every job Trainer snapshotted from one version of a runtime holds
// the same YAML, and decoding it was half the cost of reading a snapshot
// (CPU profile, make bench at N = 500).
type snapshotDecoder struct {
	mu  sync.Mutex
	max int
	// byContent holds decoded runtimes, read-only, by digest of their YAML.
	byContent map[[sha256.Size]byte]*trainer.TrainingRuntime
	// order of insertion, to forget the oldest past max.
	order [][sha256.Size]byte
}

// snapshotsRemembered bounds the decoder: one entry per runtime version
// that queued jobs were snapshotted from, each the size of a runtime.
const snapshotsRemembered = 64

func newSnapshotDecoder(limit int) *snapshotDecoder {
	return &snapshotDecoder{max: limit, byContent: map[[sha256.Size]byte]*trainer.TrainingRuntime{}}
}

// decode the YAML of a snapshot. TrainingRuntime and ClusterTrainingRuntime
// share their spec, so both decode as a TrainingRuntime.
func (d *snapshotDecoder) decode(data string) (*trainer.TrainingRuntime, error) {
	if d == nil {
		return unmarshalRuntime(data)
	}
	sum := sha256.Sum256([]byte(data))
	d.mu.Lock()
	known, ok := d.byContent[sum]
	d.mu.Unlock()
	if ok {
		return known, nil
	}
	rt, err := unmarshalRuntime(data)
	if err != nil {
		// Not remembered: a snapshot Trainer refuses is rare, and is
		// reported on every job that holds one.
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.byContent[sum]; !ok {
		if len(d.order) >= d.max {
			delete(d.byContent, d.order[0])
			d.order = d.order[1:]
		}
		d.byContent[sum] = rt
		d.order = append(d.order, sum)
	}
	return d.byContent[sum], nil
}

func unmarshalRuntime(data string) (*trainer.TrainingRuntime, error) {
	rt := &trainer.TrainingRuntime{}
	if err := yaml.Unmarshal([]byte(data), rt); err != nil {
		return nil, err
	}
	return rt, nil
}
