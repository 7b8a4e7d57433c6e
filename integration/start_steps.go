package integration

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// startStep renders one write of a start for the job as read now (a
// guarded write re-reads it when our copy was stale): the operations, and
// whether they write the admission's entries. moved: the job's spec is no
// longer the one (generation gen) the entries were computed from — the
// user edited it meanwhile (spec.trainer, overrides) — and nothing may be
// written: the job would start with pods the reservation was not made for.
type startStep func(j *trainjob.TrainJob, s shape.Shape, want []shape.Injection, gen int64) (ops []shape.Op, injected, moved bool)

// injectStep: the admission's entries, on a suspended job.
func injectStep(j *trainjob.TrainJob, s shape.Shape, want []shape.Injection, gen int64) ([]shape.Op, bool, bool) {
	if j.Generation != gen {
		return nil, false, true
	}
	ops := s.Inject(j, want)
	return append(ops, shape.DropCopiedQueueLabel(j)...), ops != nil, false
}

// unsuspendStep: spec.suspend=false, once the entries are exactly ours; a
// job someone already started (a second reconcile on a lagging cache) is
// left alone.
func unsuspendStep(j *trainjob.TrainJob, s shape.Shape, want []shape.Injection, gen int64) ([]shape.Op, bool, bool) {
	if !j.Suspended() {
		return nil, false, false
	}
	if j.Generation != gen || s.Inject(j, want) != nil || j.QueueLabelCopied() {
		return nil, false, true
	}
	return []shape.Op{unsuspend}, false, false
}

// oneRequestStep: the entries and spec.suspend=false together (Trainer
// v2.2.1+).
func oneRequestStep(j *trainjob.TrainJob, s shape.Shape, want []shape.Injection, gen int64) ([]shape.Op, bool, bool) {
	if !j.Suspended() {
		return nil, false, false // started already, by a reconcile on fresher data
	}
	if j.Generation != gen {
		return nil, false, true
	}
	ops := s.Inject(j, want)
	return append(append(ops, shape.DropCopiedQueueLabel(j)...), unsuspend), ops != nil, false
}

var unsuspend = shape.Op{Op: "replace", Path: "/spec/suspend", Value: false}

// injection is what the pods of one role must get on top of their template
// tmpl; a refusal when the admission contradicts the template (flavorsOf
// names a role's flavors for the message).
func injection(tmpl *corev1.PodTemplateSpec, info *podset.PodSetInfo, flavorsOf func(kueue.PodSetReference) string) (shape.Injection, refusal) {
	for _, k := range slices.Sorted(maps.Keys(info.NodeSelector)) {
		if have, ok := tmpl.Spec.NodeSelector[k]; ok && have != info.NodeSelector[k] {
			return shape.Injection{}, refusal{ReasonNodeSelectorConflict, "nodeSelector", fmt.Sprintf("role %q: admission to flavor(s) %s sets nodeSelector %s=%s, but the pod template (runtime or spec overrides) requires %s=%s; the job is not started. Remove the key from the template or send the job to a queue whose flavors agree",
				info.Name, flavorsOf(info.Name), k, info.NodeSelector[k], k, have)}
		}
	}
	// Trainer merges an entry's tolerations by replacing the pods' whole
	// list: the entry carries the template's and the flavor's.
	var tolerations []corev1.Toleration
	if len(info.Tolerations) > 0 {
		tolerations = slices.Clone(tmpl.Spec.Tolerations)
		for _, tol := range info.Tolerations {
			if !slices.ContainsFunc(tolerations, func(have corev1.Toleration) bool {
				return have.MatchToleration(&tol) && have.Value == tol.Value && ptr.Equal(have.TolerationSeconds, tol.TolerationSeconds)
			}) {
				tolerations = append(tolerations, tol)
			}
		}
	}
	return shape.Injection{
		Name:            string(info.Name),
		Labels:          info.Labels,
		Annotations:     info.Annotations,
		NodeSelector:    info.NodeSelector,
		Tolerations:     tolerations,
		SchedulingGates: info.SchedulingGates,
	}, refusal{}
}

// metadataUnsupported: an override field without pod metadata (Trainer
// v2.0) can't carry pod labels or annotations. Not Kueue's podset label
// and workload annotation, so the topology ungater would never find the
// pods (gated for ever); nor what an admission check's podSetUpdates give
// the pods, such as a ProvisioningRequest's consume annotation, without
// which the pods would not land on the capacity booked for them. The labels
// and annotations Kueue gives every admission (its podset label, its
// workload annotation) are only for those two, and are not asked about.
func metadataUnsupported(caps shape.Capabilities, infos []podset.PodSetInfo, checks []kueue.AdmissionCheckState) refusal {
	for i := range infos {
		info := &infos[i]
		if slices.ContainsFunc(info.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.TopologySchedulingGate }) {
			return refusal{ReasonTopologyUnsupported, "schedulingGates", fmt.Sprintf("role %q was admitted with topology-aware scheduling, which Trainer v2.0 can't carry out (%s has no pod labels or annotations for Kueue's ungater); the job is not started. Use a ClusterQueue without a topology for Trainer v2.0 jobs, or upgrade Trainer to v2.1+",
				info.Name, caps.Field)}
		}
	}
	for _, check := range checks {
		for _, u := range check.PodSetUpdates {
			keys := slices.Sorted(maps.Keys(u.Annotations))
			keys = append(keys, slices.Sorted(maps.Keys(u.Labels))...)
			if len(keys) > 0 {
				return refusal{ReasonPodMetadataUnsupported, "podSetUpdates", fmt.Sprintf("role %q was admitted with pod labels or annotations from admission check %s (%s), which Trainer v2.0 can't give its pods (%s has no pod metadata); the job is not started, as its pods would miss what was obtained for them (a ProvisioningRequest's capacity). Use a ClusterQueue without such admission checks for Trainer v2.0 jobs, or upgrade Trainer to v2.1+",
					u.Name, check.Name, strings.Join(keys, ", "), caps.Field)}
			}
		}
	}
	return refusal{}
}

// admittedFlavors says which flavors each injected role got, for events.
func (o *observed) admittedFlavors(roles []shape.Injection) string {
	parts := make([]string, 0, len(roles))
	for _, r := range roles {
		parts = append(parts, r.Name+"→"+o.flavorsOf(kueue.NewPodSetReference(r.Name)))
	}
	return strings.Join(parts, " ")
}

// flavorsOf names the flavors assigned to a PodSet, for messages.
func (o *observed) flavorsOf(name kueue.PodSetReference) string {
	wl := o.reserved()
	if wl == nil || wl.Status.Admission == nil {
		return "(unknown)"
	}
	set := map[string]bool{}
	for _, a := range wl.Status.Admission.PodSetAssignments {
		if a.Name != name {
			continue
		}
		for _, f := range a.Flavors {
			set[string(f)] = true
		}
	}
	if len(set) == 0 {
		return "(none)"
	}
	return strings.Join(slices.Sorted(maps.Keys(set)), ",")
}
