package main

import (
	"crypto/sha256"
	"encoding/json"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
)

// cacheOptions keep in the informer caches only what the manager reads:
// with thousands of TrainJobs and Workloads the cache is most of its
// memory.
func cacheOptions() cache.Options {
	shared := newPodSetInterner(maxSharedPodSets)
	return cache.Options{
		DefaultTransform: func(obj any) (any, error) {
			obj, err := stripUnread(obj)
			if wl, ok := obj.(*kueue.Workload); ok {
				wl.Spec.PodSets = shared.intern(wl.Spec.PodSets)
			}
			return obj, err
		},
		ByObject: map[client.Object]cache.ByObject{
			// The shape watch reads one CRD; the others (Trainer's runtime
			// CRDs embed a JobSet's schema each) are megabytes apiece.
			&apiextensionsv1.CustomResourceDefinition{}: {Field: fields.OneTermEqualSelector("metadata.name", trainJobCRD)},
		},
	}
}

// trainJobCRD is the CRD the manager watches for its shape.
const trainJobCRD = "trainjobs.trainer.kubeflow.org"

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
	return gv.Group != integration.GVK.Group || owner.Kind != integration.GVK.Kind
}

// maxSharedPodSets bounds the distinct PodSet lists kept for sharing.
const maxSharedPodSets = 512

// podSetInterner makes Workloads with equal PodSets share one copy in the
// cache. A Workload's PodSets hold a pod template per role and are most
// of its size; the Workloads of one runtime's queued jobs have equal ones.
// Readers never see the sharing: the cache deep-copies what it returns,
// and its own objects are never changed in place.
type podSetInterner struct {
	mu    sync.Mutex
	max   int
	bySum map[[sha256.Size]byte][]kueue.PodSet
	// order of insertion, to forget the oldest past max.
	order [][sha256.Size]byte
}

func newPodSetInterner(limit int) *podSetInterner {
	return &podSetInterner{max: limit, bySum: map[[sha256.Size]byte][]kueue.PodSet{}}
}

func (p *podSetInterner) intern(ps []kueue.PodSet) []kueue.PodSet {
	if len(ps) == 0 {
		return ps
	}
	data, err := json.Marshal(ps)
	if err != nil {
		return ps
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
	p.bySum[sum] = ps
	p.order = append(p.order, sum)
	return ps
}
