package localcluster

// The releases a local cluster runs, in one table: what it runs unless
// told, and every release it can run. The Makefile's defaults and lists,
// hack/component.sh, which builds them, and README's table of supported
// versions say the same: releases_test.go holds them equal.

// DefaultTrainerVersion is the Trainer release a cluster runs unless told
// (make demo and the preemption-cost suite pin v2.3.0).
const DefaultTrainerVersion = "v2.1.0"

// NewestTrainerVersion is the newest Trainer release a cluster can run:
// the suites of what only it serves (progress reports, the runtime
// snapshot, a pod's grace) and the benchmarks run it.
const NewestTrainerVersion = "v2.3.0"

// TrainerReleases are the Trainer releases a cluster can run, each with
// the JobSet release it pins in its go.mod (which runs beside it).
func TrainerReleases() map[string]string {
	return map[string]string{"v2.0.1": "v0.8.2", "v2.1.0": "v0.10.1", "v2.2.0": "v0.11.1", "v2.3.0": "v0.12.0"}
}

// DefaultKueueVersion is the Kueue release a cluster runs unless told.
const DefaultKueueVersion = "v0.19.2"

// KueueReleases are the Kueue releases a cluster can run: the one the
// manager links, and the oldest line admins run.
func KueueReleases() []string { return []string{"v0.16.2", DefaultKueueVersion} }

// Kubernetes releases of the control plane (hack/component.sh builds each
// from a tools module of its own).
const (
	// KubernetesCoscheduling: kube-scheduler is scheduler-plugins'
	// (v0.34.7, the newest release the module proxy serves, built against
	// this release), with its coscheduling plugin and PodGroup CRD.
	KubernetesCoscheduling = "v1.34.4"
	// KubernetesWorkloadAPI: Kubernetes' own kube-scheduler, the
	// GenericWorkload gate on in every component and
	// scheduling.k8s.io/v1beta1 served: gang scheduling of Kubernetes'
	// PodGroups. No scheduler-plugins release builds against it, so no
	// coscheduling (a 1.34 scheduler would be outside Kubernetes' version
	// skew).
	KubernetesWorkloadAPI = "v1.37.2"
	// DefaultKubernetesVersion is the release a cluster runs unless told.
	DefaultKubernetesVersion = KubernetesWorkloadAPI
)

// KubernetesReleases are the control-plane releases a cluster can run.
func KubernetesReleases() []string { return []string{KubernetesCoscheduling, KubernetesWorkloadAPI} }
