package forecast

import (
	corev1 "k8s.io/api/core/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/quota"
)

// lendable is what one ClusterQueue of a cohort lends now, per flavor and
// resource: its unused nominal quota, capped by its lendingLimit.
func lendable(cq *kueue.ClusterQueue) map[string]corev1.ResourceList {
	used := Used(cq.Status.FlavorsReservation)
	out := map[string]corev1.ResourceList{}
	for _, rg := range cq.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			f := string(fq.Name)
			for _, r := range fq.Resources {
				free := r.NominalQuota.DeepCopy()
				if u, ok := used[f][r.Name]; ok {
					free.Sub(u)
				}
				if free.Sign() <= 0 {
					continue
				}
				if r.LendingLimit != nil && r.LendingLimit.Cmp(free) < 0 {
					free = r.LendingLimit.DeepCopy()
				}
				if out[f] == nil {
					out[f] = corev1.ResourceList{}
				}
				out[f][r.Name] = free
			}
		}
	}
	return out
}

// CohortLends sums what the other members of a cohort lend now, and what
// they would lend were they idle.
func CohortLends(members []*kueue.ClusterQueue) (now, idle map[string]corev1.ResourceList) {
	now, idle = map[string]corev1.ResourceList{}, map[string]corev1.ResourceList{}
	for _, cq := range members {
		for f, list := range lendable(cq) {
			now[f] = quota.Add(now[f], list)
		}
		empty := cq.DeepCopy()
		empty.Status.FlavorsReservation = nil
		for f, list := range lendable(empty) {
			idle[f] = quota.Add(idle[f], list)
		}
	}
	return now, idle
}
