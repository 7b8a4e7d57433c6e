package gang

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// A Kubernetes PodGroup's name is computable in advance (WorkloadAPIGroupName:
// the job's name and a token of its Workload's UID and reservation
// second), and PodGroup create is in the namespace's edit role. So what
// stands under that name when our start comes may be a co-tenant's: we
// create, and on a conflict judge what is there (ClaimOf) before a pod of
// the job may name it; and a pod that names such a name before the group
// exists must be the job's (WorkloadAPINameOf), or a forger's pod would be in
// the gang the moment we make it.

// Claim is what an existing PodGroup under the name of one we would make
// is to the job.
type Claim int

const (
	// ClaimOurs: the job's (its controller, by UID, and our label), as we
	// would make it: the start uses it.
	ClaimOurs Claim = iota
	// ClaimStale: the job's by its controller, but not as this start's
	// plan has it (an earlier try of the start, before the pods' priority
	// class changed; a group edited since; a co-tenant's copying the job's
	// UID): never used, and not deleted either, since pods of the job may
	// name it already (a start retried from a cache that lags its first
	// write).
	ClaimStale
	// ClaimSquatted: not the job's: never used, never changed by us.
	ClaimSquatted
)

// specFieldsWeSet are the PodGroup spec fields a group of ours may hold:
// ours, and what the API server sets from them (the priority its priority
// admission resolves from the class; the preemption policy and disruption
// mode it defaults, judged below). Any other (topology constraints,
// resource claims, a parent group, a workload reference) is someone
// else's and would reach our pods' scheduling.
var specFieldsWeSet = []string{"schedulingPolicy", "priorityClassName", "priority", "preemptionPolicy", "disruptionMode"}

// serverDefaults are the values the API server gives the spec fields we
// leave unset (Kubernetes v1.37): any other is someone else's choice.
var serverDefaults = map[string]any{
	"preemptionPolicy": "PreemptLowerPriority",
	"disruptionMode":   map[string]any{"single": map[string]any{}},
}

// ClaimOf judges existing, found under want's name, against want (the
// group WorkloadAPIGroup makes for the job): why says what makes it stale or
// another's, for the job's owner.
func ClaimOf(existing, want *unstructured.Unstructured) (claim Claim, why string) {
	wantOwner := metav1.GetControllerOfNoCopy(want)
	owner := metav1.GetControllerOfNoCopy(existing)
	if owner == nil || wantOwner == nil || owner.UID != wantOwner.UID || existing.GetLabels()[names.OwnedLabel] != "true" {
		return ClaimSquatted, "it is not this job's: " + controllerOf(existing)
	}
	if existing.GetDeletionTimestamp() != nil {
		return ClaimStale, "it is being deleted"
	}
	spec, _, _ := unstructured.NestedMap(existing.Object, "spec")
	wantSpec, _, _ := unstructured.NestedMap(want.Object, "spec")
	for _, k := range slices.Sorted(maps.Keys(spec)) {
		if !slices.Contains(specFieldsWeSet, k) {
			return ClaimStale, fmt.Sprintf("it sets spec.%s, which trainjob-kueue never sets", k)
		}
	}
	for _, k := range []string{"schedulingPolicy", "priorityClassName"} {
		if !equality.Semantic.DeepEqual(spec[k], wantSpec[k]) {
			return ClaimStale, fmt.Sprintf("its spec.%s is %v, this admission's is %v", k, spec[k], wantSpec[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(serverDefaults)) {
		if v, ok := spec[k]; ok && !equality.Semantic.DeepEqual(v, serverDefaults[k]) {
			return ClaimStale, fmt.Sprintf("its spec.%s is %v, which trainjob-kueue never sets", k, v)
		}
	}
	if want.GetAnnotations()[names.PodGroupRolesAnnotation] != existing.GetAnnotations()[names.PodGroupRolesAnnotation] ||
		want.GetLabels()[names.PodGroupAdmissionLabel] != existing.GetLabels()[names.PodGroupAdmissionLabel] {
		return ClaimStale, "it was made for another wave or admission"
	}
	return ClaimOurs, ""
}

// controllerOf names obj's controller for a message.
func controllerOf(obj metav1.Object) string {
	owner := metav1.GetControllerOfNoCopy(obj)
	if owner == nil {
		return "it has no controller"
	}
	if owner.Kind == trainer.TrainJobKind {
		return fmt.Sprintf("its controller is TrainJob %s with UID %s", owner.Name, owner.UID)
	}
	return fmt.Sprintf("its controller is %s %s", owner.Kind, owner.Name)
}

// workloadAPITail is what follows the job's name in WorkloadAPIGroupName's names
// that fit a label value: maybe "." and its wave's first role, then "-"
// and the admission token.
var workloadAPITail = regexp.MustCompile(`^(\..+)?-[0-9a-f]{6}$`)

// shortenedTail ends a name shorten cut: "." and 8 hex digits.
var shortenedTail = regexp.MustCompile(`\.[0-9a-f]{8}$`)

// WorkloadAPINameOf tells whether name is one WorkloadAPIGroupName may give a
// group of the job named job, at any admission: a name reserved for that
// job's pods.
func WorkloadAPINameOf(job, name string) bool {
	if rest, ok := strings.CutPrefix(name, job); ok && workloadAPITail.MatchString(rest) {
		return true
	}
	if len(name) != 63 || !shortenedTail.MatchString(name) {
		return false
	}
	// A name cut to 63: what is left of the whole before the hash.
	kept := name[:len(name)-9]
	return strings.HasPrefix(job, kept) || strings.HasPrefix(kept, job+".") || strings.HasPrefix(kept, job+"-")
}

// WorkloadAPIOwned: pg is a group trainjob-kueue made (our label) for a
// TrainJob (its controller), whose name and UID it returns. Whether it is
// that job's indeed is the UID's to say (WorkloadAPIGroupFor).
func WorkloadAPIOwned(pg metav1.Object) (*metav1.OwnerReference, bool) {
	owner := metav1.GetControllerOfNoCopy(pg)
	if pg.GetLabels()[names.OwnedLabel] != "true" || owner == nil || owner.Kind != trainer.TrainJobKind {
		return nil, false
	}
	return owner, true
}
