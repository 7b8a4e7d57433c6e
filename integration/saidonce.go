package integration

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// saidOnceSize bounds what is remembered: past it, it starts over (and a
// refusal may be said once more).
const saidOnceSize = 4096

// saidOnce remembers the Workloads whose start we refused for good, so the
// refusal is said once: until Kueue's Finished condition reaches our cache,
// another reconcile of the same admission asks again, and the answer is
// the same.
type saidOnce struct {
	mu   sync.Mutex
	said map[saidKey]bool
}

type saidKey struct {
	workload types.UID
	reason   string
}

func newSaidOnce() *saidOnce { return &saidOnce{said: map[saidKey]bool{}} }

// first reports whether reason is said for the first time about workload,
// and remembers it.
func (s *saidOnce) first(workload types.UID, reason string) bool {
	if s == nil || workload == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := saidKey{workload, reason}
	if s.said[k] {
		return false
	}
	if len(s.said) >= saidOnceSize {
		s.said = map[saidKey]bool{}
	}
	s.said[k] = true
	return true
}
