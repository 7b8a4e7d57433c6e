package quota

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// RoleUsage is what one role of a job asks for.
type RoleUsage struct {
	Name  string
	Count int32
	// PerPod is one pod's effective requests.
	PerPod corev1.ResourceList
	// Total is PerPod × Count.
	Total corev1.ResourceList
}

// Usage returns every role's requests, in role order.
func Usage(roles []podsets.Role) []RoleUsage {
	out := make([]RoleUsage, len(roles))
	for i := range roles {
		per := PodRequests(&roles[i].Template.Spec)
		out[i] = RoleUsage{
			Name:   roles[i].Name,
			Count:  roles[i].Count(),
			PerPod: per,
			Total:  Scale(per, roles[i].Count()),
		}
	}
	return out
}

// JobTotal is the sum of every role's total: what Kueue reserves for the
// whole job at admission.
func JobTotal(usage []RoleUsage) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range usage {
		total = Add(total, usage[i].Total)
	}
	return total
}
