package quota

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// PodRequests is what one pod of spec requests from a node: the larger of
// its init-phase peak and its running containers plus restartable (sidecar)
// init containers, plus pod overhead. A container that sets only limits
// requests its limits, as the API server defaults it.
func PodRequests(spec *corev1.PodSpec) corev1.ResourceList {
	pod := &corev1.Pod{Spec: *spec.DeepCopy()}
	defaultRequestsFromLimits(pod.Spec.InitContainers)
	defaultRequestsFromLimits(pod.Spec.Containers)
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

func defaultRequestsFromLimits(containers []corev1.Container) {
	for i := range containers {
		r := &containers[i].Resources
		for name, limit := range r.Limits {
			if _, ok := r.Requests[name]; ok {
				continue
			}
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			r.Requests[name] = limit.DeepCopy()
		}
	}
}

// Scale returns list × n.
func Scale(list corev1.ResourceList, n int32) corev1.ResourceList {
	out := make(corev1.ResourceList, len(list))
	for name, q := range list {
		v := q.DeepCopy()
		v.Mul(int64(n))
		out[name] = v
	}
	return out
}

// Add adds b into a, allocating a when nil, and returns it.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	if a == nil {
		a = corev1.ResourceList{}
	}
	for name, q := range b {
		v := a[name]
		v.Add(q)
		a[name] = v
	}
	return a
}
