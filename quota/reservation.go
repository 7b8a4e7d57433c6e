package quota

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// KeepsReservation tells whether a job whose Workload holds a quota
// reservation of reserved goes on reporting those PodSets rather than the
// computed ones: always while it runs (its JobSet can't change shape, so an
// edited runtime must not stop it, nor a Workload another integration
// wrote), and before it starts while it asks for the same pods (same
// roles, counts and requests) in the same places (nodeSelector, affinity,
// tolerations, topology): a queued job edited in any of those after its
// reservation must be placed anew.
func KeepsReservation(reserved, computed []kueue.PodSet, running bool) bool {
	return running || SameDemand(reserved, computed) && samePlacement(reserved, computed)
}

// Equivalent is Kueue's job framework's test of a job's PodSets against its
// Workload's (jobframework.EquivalentToWorkload, by pkg/util/equality's
// ComparePodSetSlices, restated here to keep the core free of Kueue's
// packages): count, minCount and containers per PodSet by position,
// tolerations only until admitted; names are not compared. A job that
// fails it is stopped if it runs, and its Workload corrected or re-created.
func Equivalent(job, stored []kueue.PodSet, admitted bool) bool {
	return Difference(stored, job, admitted) == ""
}

// Difference names the first difference Equivalent finds between a
// Workload's PodSets (stored) and a job's (computed), for a person: "" when
// there is none.
func Difference(stored, computed []kueue.PodSet, admitted bool) string {
	if len(stored) != len(computed) {
		return fmt.Sprintf("its Workload has %d PodSets (%s), Trainer runs %d (%s)", len(stored), podSetNames(stored), len(computed), podSetNames(computed))
	}
	for i := range stored {
		a, b := &stored[i], &computed[i]
		where := fmt.Sprintf("PodSet %d (%s)", i, a.Name)
		if a.Name != b.Name {
			where = fmt.Sprintf("PodSet %d (%s in its Workload, %s by Trainer's rules)", i, a.Name, b.Name)
		}
		switch {
		case a.Count != b.Count:
			return fmt.Sprintf("%s: %d pods in its Workload, %d by Trainer's rules", where, a.Count, b.Count)
		case ptr.Deref(a.MinCount, -1) != ptr.Deref(b.MinCount, -1):
			return where + ": minCount differs"
		case !equality.Semantic.DeepEqual(a.Template.Spec.InitContainers, b.Template.Spec.InitContainers):
			return where + ": init containers differ" + requestsDiff(a.Template.Spec.InitContainers, b.Template.Spec.InitContainers)
		case !equality.Semantic.DeepEqual(a.Template.Spec.Containers, b.Template.Spec.Containers):
			return where + ": containers differ" + requestsDiff(a.Template.Spec.Containers, b.Template.Spec.Containers)
		case !admitted && !equality.Semantic.DeepEqual(a.Template.Spec.Tolerations, b.Template.Spec.Tolerations):
			return where + ": tolerations differ"
		}
	}
	return ""
}

func podSetNames(ps []kueue.PodSet) string {
	names := make([]string, len(ps))
	for i := range ps {
		names[i] = string(ps[i].Name)
	}
	return strings.Join(names, ", ")
}

// requestsDiff says how the containers' requests differ, when they do.
func requestsDiff(stored, computed []corev1.Container) string {
	for i := range min(len(stored), len(computed)) {
		a, b := stored[i].Resources.Requests, computed[i].Resources.Requests
		if !equality.Semantic.DeepEqual(a, b) {
			return fmt.Sprintf(" (container %s requests %s in its Workload, %s by Trainer's rules)", stored[i].Name, quantities(a), quantities(b))
		}
	}
	return ""
}

func quantities(l corev1.ResourceList) string {
	if len(l) == 0 {
		return "nothing"
	}
	parts := make([]string, 0, len(l))
	for name, q := range l {
		parts = append(parts, string(name)+"="+q.String())
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// SameDemand: same roles, same counts, same per-pod requests.
func SameDemand(a, b []kueue.PodSet) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Count != b[i].Count {
			return false
		}
		if !equality.Semantic.DeepEqual(PodRequests(&a[i].Template.Spec), PodRequests(&b[i].Template.Spec)) {
			return false
		}
	}
	return true
}

// samePlacement: same nodeSelector, affinity, tolerations and topology
// request per role.
func samePlacement(a, b []kueue.PodSet) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i].Template.Spec, &b[i].Template.Spec
		if !maps.Equal(x.NodeSelector, y.NodeSelector) ||
			!equality.Semantic.DeepEqual(x.Affinity, y.Affinity) ||
			!equality.Semantic.DeepEqual(a[i].TopologyRequest, b[i].TopologyRequest) ||
			!sameTolerations(x.Tolerations, y.Tolerations) {
			return false
		}
	}
	return true
}

// sameTolerations compares as sets: order does not matter to the scheduler.
func sameTolerations(a, b []corev1.Toleration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.ContainsFunc(b, func(t corev1.Toleration) bool { return equality.Semantic.DeepEqual(a[i], t) }) {
			return false
		}
	}
	return true
}
