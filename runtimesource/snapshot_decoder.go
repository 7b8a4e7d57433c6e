package runtimesource

import (
	"crypto/sha256"
	"sync"

	"sigs.k8s.io/yaml"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

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
