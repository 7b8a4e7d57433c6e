package discovery

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clientdiscovery "k8s.io/client-go/discovery"
)

// workloadAPIGroupVersion holds the Workload API's PodGroups: beta in
// Kubernetes 1.37, served only with the GenericWorkload gate on and the
// group in the API server's runtime-config.
const workloadAPIGroupVersion = "scheduling.k8s.io/v1beta1"

// ServesWorkloadAPI reports whether the API server serves Kubernetes' own
// PodGroups (gang mode workload-api). Discovery needs no permission.
func ServesWorkloadAPI(d clientdiscovery.ServerResourcesInterface) (bool, error) {
	list, err := d.ServerResourcesForGroupVersion(workloadAPIGroupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", workloadAPIGroupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "podgroups" {
			return true, nil
		}
	}
	return false, nil
}
