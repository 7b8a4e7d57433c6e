package podsets

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// checkQuantities refuses requests and limits pods could never be given: a
// negative one would book negative quota (and let other jobs over-admit);
// a fractional extended resource (nvidia.com/gpu: 0.5) is refused by
// Kubernetes on pods, so the job would hold quota and never run.
func checkQuantities(where string, list corev1.ResourceList) error {
	for _, name := range sortedResourceNames(list) {
		q := list[name]
		if q.Sign() < 0 {
			return fmt.Errorf("%s %s is %s: quantities must not be negative", where, name, q.String())
		}
		if extended(name) && q.MilliValue()%1000 != 0 {
			return fmt.Errorf("%s %s is %s: extended resources take whole numbers (Kubernetes refuses fractions on pods)", where, name, q.String())
		}
	}
	return nil
}

// checkPodQuantities checks every container's requests and limits.
func checkPodQuantities(role string, spec *corev1.PodSpec) error {
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			c := &list[i]
			where := fmt.Sprintf("replicatedJob %q container %q", role, c.Name)
			if err := checkQuantities(where+" requests", c.Resources.Requests); err != nil {
				return err
			}
			if err := checkQuantities(where+" limits", c.Resources.Limits); err != nil {
				return err
			}
		}
	}
	return nil
}

// extended: a resource named outside the kubernetes.io namespace, as
// Kubernetes tells extended resources from native ones.
func extended(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	domain := s[:strings.Index(s, "/")]
	return domain != "kubernetes.io" && !strings.HasSuffix(domain, ".kubernetes.io")
}

func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(list))
}
