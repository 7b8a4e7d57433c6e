package gang

import (
	"fmt"

	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// Schedulers is which gang schedulers' PodGroups the cluster serves,
// learned at the manager's start.
type Schedulers struct {
	// PodGroupCRD: scheduler-plugins' PodGroup CRD
	// (podgroups.scheduling.x-k8s.io) is installed.
	PodGroupCRD bool
	// WorkloadAPI: the API server serves the Workload API's PodGroups
	// (scheduling.k8s.io/v1beta1 podgroups).
	WorkloadAPI bool
}

// Available refuses, naming the annotation and what the cluster lacks, a
// gang mode whose PodGroups the cluster does not serve; nil for one it
// does and for no gang.
func (s Schedulers) Available(mode string) error {
	if msg := unavailable(mode, s); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

func unavailable(mode string, s Schedulers) string {
	switch {
	case mode == Coscheduling && !s.PodGroupCRD:
		return fmt.Sprintf("gang scheduling (%s: %s) needs scheduler-plugins' PodGroup CRD (podgroups.scheduling.x-k8s.io), which is not installed: install scheduler-plugins with its coscheduling plugin (trainjob-kueue restarts to serve it once its CRD is there); or, on Kubernetes 1.37+ with its Workload API, use %q",
			names.GangSchedulingAnnotation, mode, WorkloadAPI)
	case mode == WorkloadAPI && !s.WorkloadAPI:
		return fmt.Sprintf("gang scheduling (%s: %s) needs Kubernetes' Workload API, PodGroups of scheduling.k8s.io/v1beta1, which this cluster's API server does not serve: on Kubernetes 1.37+, turn on the GenericWorkload feature gate (kube-apiserver, kube-controller-manager, kube-scheduler) and the group (kube-apiserver --runtime-config=scheduling.k8s.io/v1beta1=true), then restart trainjob-kueue; or use %q",
			names.GangSchedulingAnnotation, mode, Coscheduling)
	}
	return ""
}
