// Package informercache is the manager's cache, in one place: what its
// informers keep (informercache.go: only what the manager reads, with
// equal parts of thousands of queued jobs shared; with thousands of
// TrainJobs and Workloads the cache is most of its memory, docs/scale.md)
// and how the kinds it watches most are decoded (onepass.go: each TrainJob
// and Workload watch event in one pass over its line instead of
// client-go's five). The manager, and the integration tier that runs it in
// process, wire it; nothing else.
package informercache

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"sync"
	"unique"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Options keep in the informer caches only what the manager reads.
func Options() cache.Options {
	shared := newSharing(maxShared)
	return cache.Options{
		DefaultTransform: func(obj any) (any, error) {
			obj, err := stripUnread(obj)
			shared.share(obj)
			return obj, err
		},
		ByObject: map[client.Object]cache.ByObject{
			// The shape watch reads one CRD; the others (Trainer's runtime
			// CRDs embed a JobSet's schema each) are megabytes apiece.
			&apiextensionsv1.CustomResourceDefinition{}: {Field: fields.OneTermEqualSelector("metadata.name", discovery.TrainJobCRD)},
		},
	}
}

// stripUnread drops what no reader of the cache looks at: managedFields
// (often the largest part of an object) and kubectl's last-applied copy of
// the object, and the spec and status of Workloads another kind of job
// controls. The job framework finds a TrainJob's Workloads by owner, and a
// MultiKueue worker's prebuilt Workload by name (it has no controller): those
// stay whole. Objects reach it fresh from the watch, so changing them in
// place is safe.
func stripUnread(obj any) (any, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	o.SetManagedFields(nil)
	if a := o.GetAnnotations(); a != nil {
		if _, ok := a[corev1.LastAppliedConfigAnnotation]; ok {
			delete(a, corev1.LastAppliedConfigAnnotation)
		}
	}
	if wl, ok := obj.(*kueue.Workload); ok && controlledByOtherJob(wl) {
		wl.Spec = kueue.WorkloadSpec{}
		wl.Status = kueue.WorkloadStatus{}
	}
	return obj, nil
}

func controlledByOtherJob(wl *kueue.Workload) bool {
	owner := metav1.GetControllerOfNoCopy(wl)
	if owner == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return false
	}
	return gv.Group != trainjob.GVK.Group || owner.Kind != trainjob.GVK.Kind
}

// maxShared bounds the distinct values kept for sharing, of each kind.
const maxShared = 512

// sharing makes cached objects share what many of them hold equal. The
// queued jobs of one runtime have equal PodSets (a pod template per role:
// most of a Workload's size), equal resource requests, equal child-job
// counts, and the same few condition messages. Readers never see the
// sharing: the cache deep-copies what it returns, and its own objects are
// never changed in place.
type sharing struct {
	podSets  *interner[kueue.PodSet]
	requests *interner[kueue.PodSetRequest]
	jobs     *interner[trainer.JobStatus]
}

func newSharing(limit int) *sharing {
	return &sharing{
		podSets:  newInterner[kueue.PodSet](limit),
		requests: newInterner[kueue.PodSetRequest](limit),
		jobs:     newInterner[trainer.JobStatus](limit),
	}
}

// share the parts of obj that equal another cached object's.
func (s *sharing) share(obj any) {
	switch o := obj.(type) {
	case *kueue.Workload:
		o.Spec.PodSets = s.podSets.intern(o.Spec.PodSets)
		o.Status.ResourceRequests = s.requests.intern(o.Status.ResourceRequests)
		canonicalConditions(o.Status.Conditions)
	case *trainjob.TrainJob:
		o.Status.JobsStatus = s.jobs.intern(o.Status.JobsStatus)
		canonicalConditions(o.Status.Conditions)
		if ts := o.Status.TrainerStatus; ts != nil {
			// Progress, time left and a checkpoint time are read
			// (preemption cost); a training's other metrics would cost
			// memory per running job.
			ts.Metrics = slices.DeleteFunc(ts.Metrics, func(m trainer.Metric) bool { return !preemptcost.IsCheckpointMetric(m.Name) })
		}
	}
}

// canonicalConditions makes the conditions' texts, the same few across
// thousands of queued jobs, share one copy each (a Workload's pending
// message is a couple of hundred bytes).
func canonicalConditions(cs []metav1.Condition) {
	for i := range cs {
		c := &cs[i]
		c.Type = unique.Make(c.Type).Value()
		c.Reason = unique.Make(c.Reason).Value()
		c.Message = unique.Make(c.Message).Value()
	}
}

// interner keeps one copy of each distinct list of E by digest of its
// JSON, at most max of them (forgetting the oldest).
type interner[E any] struct {
	mu    sync.Mutex
	max   int
	bySum map[[sha256.Size]byte][]E
	// order of insertion, to forget the oldest past max.
	order [][sha256.Size]byte
}

func newInterner[E any](limit int) *interner[E] {
	return &interner[E]{max: limit, bySum: map[[sha256.Size]byte][]E{}}
}

// intern returns the kept copy equal to v, keeping v if there is none. An
// empty v is returned as is.
func (p *interner[E]) intern(v []E) []E {
	if len(v) == 0 {
		return v
	}
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	sum := sha256.Sum256(data)
	p.mu.Lock()
	defer p.mu.Unlock()
	if known, ok := p.bySum[sum]; ok {
		return known
	}
	if len(p.order) >= p.max {
		delete(p.bySum, p.order[0])
		p.order = p.order[1:]
	}
	p.bySum[sum] = v
	p.order = append(p.order, sum)
	return v
}
