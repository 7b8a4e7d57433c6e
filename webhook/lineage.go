package webhook

import (
	"context"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// The children webhooks read a pod's Job and a Job's JobSet one by one
// (JobSets are also read by the integration: integration/rbac.go).
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get

// lineage proves that an object is a TrainJob's child the way Kueue's job
// framework does: through controller owner references whose names and
// UIDs match the owners that exist, hop by hop (Pod → Job → JobSet →
// TrainJob). Labels and names are anyone's to write; a UID is the API
// server's. An object that claims an owner it cannot be proven to have
// keeps Kueue's queueing: the children webhooks take it off only what a
// TrainJob's own controllers created (docs/install.md, "Who may see
// what").
//
// A user who copies a real owner's UID into a reference of their own gets
// what Kueue gives them (its children rules, its garbage collector): the
// same wall, no wider.
type lineage struct {
	// cached reads TrainJobs (the informer cache the webhooks sync).
	cached client.Reader
	// live reads what is not cached (Jobs, JobSets: every one of the
	// cluster would be a large cache for a rare read; their owners exist
	// when they are created, so a read at create finds them) and a
	// TrainJob the cache has not seen yet or holds an older one of.
	live client.Reader
	// jobs remembers the Jobs proven a TrainJob's, so a Job's every pod
	// after the first costs no read of its Job and JobSet (nil: none
	// remembered).
	jobs *provenJobs
	// groups accepts a gang pod's PodGroup without a live read once the
	// cache holds it as the pod's job's (groups.go; nil: always live).
	groups groupCache
}

// ofJobSet is the TrainJob that controls js, proven by name and UID, or
// nil.
func (l lineage) ofJobSet(ctx context.Context, js metav1.Object) (*trainjob.TrainJob, error) {
	ref := controllerOfKind(js, trainjob.GVK.Group, trainjob.GVK.Kind)
	// Trainer names a TrainJob's JobSet after it: names are unique in a
	// namespace, so another JobSet claiming the job, even by its real
	// UID, cannot have that name while the job's own exists.
	if ref == nil || ref.UID == "" || ref.Name != js.GetName() {
		return nil, nil
	}
	return l.trainJob(ctx, js.GetNamespace(), ref.Name, ref.UID)
}

// trainJob is the TrainJob name of namespace when its UID is uid, or nil.
func (l lineage) trainJob(ctx context.Context, namespace, name string, uid types.UID) (*trainjob.TrainJob, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	job := &trainjob.TrainJob{}
	err := l.cached.Get(ctx, key, job)
	if err == nil && job.UID == uid {
		return job, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	// Not in the cache, or an older job of that name is: the API server
	// says which job has the name now.
	fresh := &trainjob.TrainJob{}
	if err := l.live.Get(ctx, key, fresh); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if fresh.UID != uid {
		return nil, nil
	}
	return fresh, nil
}

// ofJob is the TrainJob whose JobSet controls job, each hop proven by name
// and UID, or nil.
func (l lineage) ofJob(ctx context.Context, job metav1.Object) (*trainjob.TrainJob, error) {
	ref := controllerOfKind(job, jobsetapi.GroupVersion.Group, "JobSet")
	if ref == nil {
		return nil, nil
	}
	js := &metav1.PartialObjectMetadata{}
	js.SetGroupVersionKind(jobsetapi.GroupVersion.WithKind("JobSet"))
	if ok, err := l.owner(ctx, job.GetNamespace(), ref, js); !ok {
		return nil, err
	}
	return l.ofJobSet(ctx, js)
}

// ofPod is the TrainJob whose JobSet's Job controls pod, each hop proven
// by name and UID, and that Job (its pod template is what the pod was made
// from), or nils. A Job proven before is taken from jobs; its TrainJob is
// read again, by UID.
func (l lineage) ofPod(ctx context.Context, pod *corev1.Pod) (*trainjob.TrainJob, *batchv1.Job, error) {
	ref := controllerOfKind(pod, batchv1.GroupName, "Job")
	if ref == nil {
		return nil, nil, nil
	}
	if p, ok := l.jobs.get(ref.UID); ok && p.job.Name == ref.Name {
		tj, err := l.trainJob(ctx, pod.Namespace, p.trainJob, p.trainJobUID)
		if tj == nil {
			return nil, nil, err
		}
		return tj, p.job, nil
	}
	job := &batchv1.Job{}
	if ok, err := l.owner(ctx, pod.Namespace, ref, job); !ok {
		return nil, nil, err
	}
	tj, err := l.ofJob(ctx, job)
	if tj == nil {
		return nil, nil, err
	}
	l.jobs.put(job, tj)
	return tj, job, nil
}

// owner reads the owner ref names into obj from the API server and tells
// whether it is the one ref means: the same UID. A missing owner is no
// error, only no proof.
func (l lineage) owner(ctx context.Context, namespace string, ref *metav1.OwnerReference, obj client.Object) (bool, error) {
	if err := l.live.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return obj.GetUID() == ref.UID && ref.UID != types.UID(""), nil
}

// controllerOfKind is obj's controller when it is a kind of group, else
// nil.
func controllerOfKind(obj metav1.Object, group, kind string) *metav1.OwnerReference {
	owner := metav1.GetControllerOfNoCopy(obj)
	if owner == nil || owner.Kind != kind || apiGroup(owner.APIVersion) != group {
		return nil
	}
	return owner
}

// apiGroup is the group of an apiVersion ("batch/v1" → "batch", "v1" →
// "").
func apiGroup(apiVersion string) string {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return ""
	}
	return group
}
