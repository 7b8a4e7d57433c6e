package podsets

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Built is a replicatedJob as Trainer built it into the job's JobSet.
type Built struct {
	Name string
	// Replicas and PodsPerReplica are the replicatedJob's replicas and its
	// Job's parallelism.
	Replicas, PodsPerReplica int32
	Template                 corev1.PodTemplateSpec
}

// Outgrown says how roles ask for other pods than the JobSet Trainer built
// for the job runs, in what decides quota: the replicatedJobs, their pod
// counts and their containers' resources. Empty when they agree.
//
// Before its runtime snapshots (v2.3), Trainer builds a job's JobSet at the
// job's first reconcile, while it queues, and re-applies it from the live
// runtime at every reconcile after; JobSet refuses any change to its pods
// but the scheduling fields Kueue sets. A job whose runtime was edited in
// what decides quota can therefore never start: Trainer's re-apply, and
// with it the unsuspend, is refused ("field is immutable").
func Outgrown(built []Built, roles []Role) string {
	for i := range roles {
		r := &roles[i]
		j := slices.IndexFunc(built, func(b Built) bool { return b.Name == r.Name })
		if j < 0 {
			return fmt.Sprintf("replicatedJob %q is not in the JobSet", r.Name)
		}
		b := &built[j]
		if got, want := b.Replicas*max(b.PodsPerReplica, 1), r.Count(); got != want {
			return fmt.Sprintf("replicatedJob %q runs %d pods in the JobSet, %d now", r.Name, got, want)
		}
		if d := resourcesDiffer(&b.Template.Spec, &r.Template.Spec); d != "" {
			return fmt.Sprintf("replicatedJob %q: %s", r.Name, d)
		}
	}
	for i := range built {
		if !slices.ContainsFunc(roles, func(r Role) bool { return r.Name == built[i].Name }) {
			return fmt.Sprintf("replicatedJob %q is in the JobSet, and no longer in the runtime", built[i].Name)
		}
	}
	return ""
}

// resourcesDiffer names the first container whose resources differ
// between the built pod spec and the wanted one. Containers are matched by
// name, and one only on one side is not judged: Trainer adds to what the
// runtime says, and a false "differs" would keep a job from a start it can
// make.
func resourcesDiffer(built, want *corev1.PodSpec) string {
	for _, kind := range []struct {
		what        string
		built, want []corev1.Container
	}{{"init container", built.InitContainers, want.InitContainers}, {"container", built.Containers, want.Containers}} {
		for i := range kind.want {
			w := &kind.want[i]
			j := slices.IndexFunc(kind.built, func(c corev1.Container) bool { return c.Name == w.Name })
			if j < 0 {
				continue
			}
			b := &kind.built[j]
			if !equality.Semantic.DeepEqual(b.Resources.Requests, w.Resources.Requests) || !equality.Semantic.DeepEqual(b.Resources.Limits, w.Resources.Limits) {
				return fmt.Sprintf("%s %q asks for %s in the JobSet, %s now", kind.what, w.Name, describe(b.Resources), describe(w.Resources))
			}
		}
	}
	return ""
}

// describe is resources as a user reads them: "requests cpu=1, limits …".
func describe(r corev1.ResourceRequirements) string {
	var parts []string
	for _, l := range []struct {
		what string
		list corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		if len(l.list) == 0 {
			continue
		}
		var kv []string
		for _, name := range slices.Sorted(maps.Keys(l.list)) {
			q := l.list[name]
			kv = append(kv, fmt.Sprintf("%s=%s", name, q.String()))
		}
		parts = append(parts, l.what+" "+strings.Join(kv, ","))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
