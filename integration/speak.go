package integration

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// saidOnceSize bounds what is remembered: past it, it starts over (and a
// refusal may be said once more).
const saidOnceSize = 4096

// saidOnce remembers what was said about an object (a Workload whose start
// we refused for good, a job whose runtime fails), so it is said once:
// until Kueue's Finished condition reaches our cache, another reconcile of
// the same admission asks again, and the answer is the same.
type saidOnce struct {
	mu   sync.Mutex
	said map[saidKey]bool
}

type saidKey struct {
	workload types.UID
	reason   string
}

func newSaidOnce() *saidOnce { return &saidOnce{said: map[saidKey]bool{}} }

// first reports whether reason is said for the first time about workload
// (or another object, by UID), and remembers it.
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
