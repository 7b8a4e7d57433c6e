package integration

import (
	"sync"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// podSetMemoSize bounds the memo: past it, it starts over.
const podSetMemoSize = 8192

// projection is a job's roles and PodSets; shared, so read-only.
type projection struct {
	roles   []podsets.Role
	podSets []kueue.PodSet
	// coscheduling is the runtime's podGroupPolicy.coscheduling: Trainer
	// makes the job a PodGroup.
	coscheduling *trainer.CoschedulingPodGroupPolicySource
}

// podSetMemo remembers projections by job UID, spec generation and runtime
// version. A queued job is reconciled on every status change of its
// Workload while its PodSets change only with its spec or its runtime;
// computing them (with the Workload CRD's defaults) was a tenth of the
// manager's CPU under load. A restart just computes them again.
type podSetMemo struct {
	mu      sync.Mutex
	max     int
	entries map[string]projection
}

func newPodSetMemo(size int) *podSetMemo {
	return &podSetMemo{max: size, entries: map[string]projection{}}
}

func (m *podSetMemo) get(key string) (projection, bool) {
	if m == nil {
		return projection{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.entries[key]
	return p, ok
}

func (m *podSetMemo) put(key string, p projection) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) >= m.max {
		m.entries = map[string]projection{}
	}
	m.entries[key] = p
}
