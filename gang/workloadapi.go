package gang

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// the Workload API's PodGroups (mode WorkloadAPI): scheduling.k8s.io/v1beta1,
// served by Kubernetes 1.37 with the GenericWorkload gate and the beta
// group in the API server's runtime-config. The manager's Kubernetes
// libraries predate the group, so the objects are written unstructured.
//
// A group is made per wave and per admission: its policy (gang or basic)
// and priority class are immutable, and the API server keeps a group its
// pods still name (PodGroupProtection's finalizer), so a re-admission's
// groups cannot be the last one's under the same names. Names can be
// computed in advance: workloadapi_claim.go says what stands under one.
var WorkloadAPIGroupGVK = schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1beta1", Kind: "PodGroup"}

// WorkloadAPIGroupName is the name of an admission's group for a wave:
// PodGroupName's, with admission (AdmissionToken) after it. It is also a
// label value (names.PodGroupLabel on the pods), so at most 63
// characters.
func WorkloadAPIGroupName(job, firstRole string, last bool, admission string) string {
	base := job
	if !last {
		base = job + "." + firstRole
	}
	return shorten(base + "-" + admission)
}

// AdmissionToken tells one admission of a Workload from the others: its
// UID and when its quota was reserved.
func AdmissionToken(workloadUID types.UID, reservedAt metav1.Time) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", workloadUID, reservedAt.Unix())))
	return hex.EncodeToString(sum[:])[:6]
}

// WorkloadAPIGroup is the object of plan p for job: a gang of exactly the
// wave's pods the admission booked, with the pods' PriorityClass (the API
// server's priority admission resolves the group's priority from it and
// refuses one set by hand; a Kueue WorkloadPriorityClass has no
// counterpart there), controlled by the job.
func WorkloadAPIGroup(p Plan, job *trainjob.TrainJob, priorityClassName string) *unstructured.Unstructured {
	spec := map[string]any{
		"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": int64(p.Gang.MinMember)}},
	}
	if priorityClassName != "" {
		spec["priorityClassName"] = priorityClassName
	}
	pg := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	pg.SetGroupVersionKind(WorkloadAPIGroupGVK)
	pg.SetName(p.Name)
	pg.SetNamespace(job.Namespace)
	pg.SetLabels(map[string]string{names.OwnedLabel: "true", names.PodGroupJobLabel: job.Name, names.PodGroupAdmissionLabel: p.Admission})
	pg.SetAnnotations(map[string]string{names.PodGroupRolesAnnotation: strings.Join(p.Roles, ",")})
	pg.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind,
		Name: job.Name, UID: job.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
	return pg
}

// WorkloadAPIGroupFor checks that pg is a group a pod of role of the TrainJob
// whose UID is jobUID may join: one we made for that job (its controller,
// by UID), for a wave with that role, not being deleted. The error says
// what is wrong, for the pod's refusal.
func WorkloadAPIGroupFor(pg metav1.Object, jobUID types.UID, role string) error {
	owner := metav1.GetControllerOfNoCopy(pg)
	switch {
	case pg.GetLabels()[names.OwnedLabel] != "true" || owner == nil || owner.Kind != trainer.TrainJobKind || owner.UID != jobUID:
		return fmt.Errorf("PodGroup %s is not one trainjob-kueue made for this pod's TrainJob", pg.GetName())
	case pg.GetDeletionTimestamp() != nil:
		return fmt.Errorf("PodGroup %s is being deleted (the admission it was made for has ended)", pg.GetName())
	case !slices.Contains(strings.Split(pg.GetAnnotations()[names.PodGroupRolesAnnotation], ","), role):
		return fmt.Errorf("PodGroup %s is for roles %q, not for this pod's role %q", pg.GetName(), pg.GetAnnotations()[names.PodGroupRolesAnnotation], role)
	}
	return nil
}

// Ended: pg is one of ours for the job with UID uid, made for an
// admission other than current ("" when the job holds none, or finished),
// and not yet deleted: its pods are gone or going, and it goes with them.
func Ended(pg metav1.Object, uid types.UID, current string) bool {
	owner := metav1.GetControllerOfNoCopy(pg)
	return pg.GetLabels()[names.OwnedLabel] == "true" && owner != nil && owner.Kind == trainer.TrainJobKind && owner.UID == uid &&
		pg.GetDeletionTimestamp() == nil && (current == "" || pg.GetLabels()[names.PodGroupAdmissionLabel] != current)
}
