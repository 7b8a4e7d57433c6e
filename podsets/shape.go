package podsets

import (
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	corev1 "k8s.io/api/core/v1"
)

// Shape is how one Trainer API version lets a TrainJob override the pod
// templates of its runtime (podSpecOverrides, podTemplateOverrides or
// runtimePatches). PodSets only needs to read the user's overrides; entries
// an integration injected at admission are not the user's and must be skipped,
// so the Workload of a running job keeps matching the job.
type Shape interface {
	// ApplyUserOverrides applies, in order and the way Trainer merges them,
	// the job's own overrides that target replicatedJob jobName.
	ApplyUserOverrides(job *trainjob.TrainJob, jobName string, tmpl *corev1.PodTemplateSpec) error
	// Rules are how the Trainer releases with this shape run a job.
	Rules() Rules
}

// Rules are what differs between Trainer releases in how they turn a
// TrainJob into pods, beyond the override field.
type Rules struct {
	// ResourcesPerNodeMerges: spec.trainer.resourcesPerNode is merged into
	// the "node" container's resources per resource name (v2.3+); before,
	// it replaced them.
	ResourcesPerNodeMerges bool
	// ResourcesPerNodeNeedsMLPolicy: the trainer step gets resourcesPerNode
	// only when the runtime has an mlPolicy (v2.3+).
	ResourcesPerNodeNeedsMLPolicy bool
	// LauncherAsNodeWorkersGetResources: with MPI runLauncherAsNode, the
	// "node" workers get resourcesPerNode too (v2.1+).
	LauncherAsNodeWorkersGetResources bool
	// NoJobsStatus: the TrainJob reports no status.jobsStatus (v2.0); the
	// state of its Jobs is read from its JobSet.
	NoJobsStatus bool
	// RuntimeSnapshot: at a job's first reconcile Trainer copies its
	// runtime into a ConfigMap and builds the job from that copy ever
	// after (v2.3+); a runtime edited later no longer changes the job.
	RuntimeSnapshot bool
}
