package loadharness

import (
	"sync"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Seen is an informer's event handler for objects of type T: f gets each
// one with the time it was seen, holding mu (the recorder's), so a
// milestone's time is the event's, not the lock's.
func Seen[T any](mu *sync.Mutex, f func(obj T, now time.Time)) func(obj any) {
	return func(obj any) {
		o, ok := obj.(T)
		if !ok {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		f(o, now)
	}
}

// TrainJobOf is the name of the TrainJob owning wl, or "" (a bare
// Workload, the floor's).
func TrainJobOf(wl *kueue.Workload) string {
	for _, o := range wl.OwnerReferences {
		if o.Kind == "TrainJob" {
			return o.Name
		}
	}
	return ""
}

// First sets *slot to now unless it is set: a milestone's time is when it
// was first seen, whatever events repeat it.
func First(slot *time.Time, now time.Time) {
	if slot.IsZero() {
		*slot = now
	}
}

// Entry is m's entry for key, made empty the first time: a job's times
// exist from the first event that names it.
func Entry[T any](m map[string]*T, key string) *T {
	t := m[key]
	if t == nil {
		t = new(T)
		m[key] = t
	}
	return t
}

// Sum of a count map's values (requests by verb and resource, say).
func Sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
