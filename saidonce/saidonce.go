// Package saidonce keeps what a controller said once: until the state it
// reported changes in the cache, the next reconcile finds the same and must
// not say it again.
package saidonce

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// size bounds what is remembered: past it, it starts over (and a
// warning may be said once more).
const size = 4096

// Memory remembers what was said about a subject (a Workload whose start
// we refused for good, a job whose runtime fails, a ClusterQueue's policy).
type Memory struct {
	mu   sync.Mutex
	said map[key]bool
}

type key struct {
	subject types.UID
	text    string
}

// New is an empty memory.
func New() *Memory { return &Memory{said: map[key]bool{}} }

// First reports whether text is said for the first time about subject, and
// remembers it. Without a subject it is always the first time.
func (s *Memory) First(subject types.UID, text string) bool {
	if s == nil || subject == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{subject, text}
	if s.said[k] {
		return false
	}
	if len(s.said) >= size {
		s.said = map[key]bool{}
	}
	s.said[k] = true
	return true
}

// Said reports whether text was said about subject, remembering nothing.
func (s *Memory) Said(subject types.UID, text string) bool {
	if s == nil || subject == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.said[key{subject, text}]
}

// Forget forgets that text was said about subject: what it stood for did
// not happen after all (a write that failed), and is to be said again.
func (s *Memory) Forget(subject types.UID, text string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.said, key{subject, text})
}
