package podsets

import (
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Admitted fits roles, computed from the runtime as it is now, to the
// PodSets a running job was admitted with. A running job's JobSet cannot
// change: a replicatedJob added to the runtime since does not run, one
// removed still does, and counts are the admitted ones. Readiness and
// reclaimable pods of the running job are judged on these, so a runtime
// edit neither marks every running job of the runtime not ready (mass
// eviction) nor reports more reclaimable pods than were admitted (which
// Kueue refuses).
func Admitted(roles []Role, admitted []kueue.PodSet) []Role {
	count := make(map[string]int32, len(admitted))
	for i := range admitted {
		count[string(admitted[i].Name)] = admitted[i].Count
	}
	out := make([]Role, 0, len(admitted))
	seen := make(map[string]bool, len(roles))
	for _, r := range roles {
		n, ok := count[r.Name]
		if !ok {
			continue
		}
		seen[r.Name] = true
		if r.Count() != n {
			if r.Replicas > 0 && n%r.Replicas == 0 {
				r.PodsPerReplica = n / r.Replicas
			} else {
				r.Replicas, r.PodsPerReplica = 1, n
			}
		}
		out = append(out, r)
	}
	for i := range admitted {
		name := string(admitted[i].Name)
		if seen[name] {
			continue
		}
		// Gone from the runtime, still running: as one Job of all its pods,
		// waiting for nothing.
		out = append(out, Role{Name: name, Replicas: 1, PodsPerReplica: admitted[i].Count, Template: *admitted[i].Template.DeepCopy()})
	}
	return out
}
