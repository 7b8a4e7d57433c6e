package integration

import "github.com/trainjob-kueue/trainjob-kueue/runtimesource"

// Reasons of the events we record on TrainJobs. Stable: users and alerts
// match on them.
const (
	ReasonRuntimeNotFound    = runtimesource.ReasonRuntimeNotFound
	ReasonUnsupportedRuntime = runtimesource.ReasonUnsupportedRuntime
	ReasonInvalidRuntime     = runtimesource.ReasonInvalidRuntime
	ReasonInjected           = "Injected"
	ReasonRestored           = "Restored"
	// ReasonAdoptedWorkloadDiffers: a running job adopted from Kueue's
	// built-in integration runs on a Workload that integration wrote,
	// which books other pods than Trainer runs; it is kept until the job's
	// next stop or requeue corrects it.
	ReasonAdoptedWorkloadDiffers = "AdoptedWorkloadDiffers"
	ReasonNodeSelectorConflict   = "NodeSelectorConflict"
	ReasonTopologyUnsupported    = "TopologyUnsupported"
	// ReasonPodMetadataUnsupported: on Trainer v2.0, an admission check
	// (a ProvisioningRequest) gives the pods labels or annotations, which
	// spec.podSpecOverrides can't carry.
	ReasonPodMetadataUnsupported = "PodMetadataUnsupported"
	// ReasonSharedOverrideConflict: on Trainer v2.0, one user entry of
	// spec.podSpecOverrides targets roles admitted to different placements.
	ReasonSharedOverrideConflict = "SharedOverrideConflict"
	// ReasonStartRefused: the API server refused the write that starts the
	// job (validation, a webhook or an admission policy); its quota is
	// released.
	ReasonStartRefused = "StartRefused"
	// ReasonStartRefusedByPolicy: a ValidatingAdmissionPolicy refused the
	// write that starts the job; the job is held (its Workload deactivated,
	// its quota released) and queued again after a backoff.
	ReasonStartRefusedByPolicy = "StartRefusedByPolicy"
	// ReasonPolicyRetry: a job held for an admission policy's refusal is
	// queued again to try the start once more.
	ReasonPolicyRetry = "PolicyRetry"
	// ReasonPriorityClassNotFound: the job's kueue.x-k8s.io/priority-class
	// label names no WorkloadPriorityClass.
	ReasonPriorityClassNotFound = "WorkloadPriorityClassNotFound"
	// ReasonPrebuiltWorkloadNotFound: the job names a prebuilt Workload
	// that does not exist.
	ReasonPrebuiltWorkloadNotFound = "PrebuiltWorkloadNotFound"
	// ReasonStopRefused: the API server refused the write that stops the
	// job; retried with backoff.
	ReasonStopRefused = "StopRefused"
	// ReasonNoMultiKueueCheck: a job for MultiKueue was admitted by a
	// ClusterQueue that does not dispatch.
	ReasonNoMultiKueueCheck = "NoMultiKueueCheck"
	// ReasonAdmissionCheckLost: a dispatched job's Workload names an
	// AdmissionCheck that was deleted; the job is kept where it runs.
	ReasonAdmissionCheckLost = "AdmissionCheckLost"
	// ReasonHeldForRuntime: the job was admitted while its runtime does
	// not exist; its Workload is deactivated until it does, and the
	// reservation goes back.
	ReasonHeldForRuntime = "HeldForRuntime"
	// ReasonJobSetOutOfDate: before Trainer v2.3, the job's runtime was
	// edited after Trainer built the job's JobSet, in what its pods ask for;
	// JobSet refuses the change, so the job can't start. Its Workload is
	// held like a missing runtime's until the two agree again.
	ReasonJobSetOutOfDate = "JobSetOutOfDate"
	// ReasonRuntimeBack: the runtime exists again (or agrees with the
	// job's JobSet again); the Workload is queued again.
	ReasonRuntimeBack = "RuntimeBack"
)

// Actions of our events: what we were doing when the event happened, the
// job framework's events.EventRecorder asks for one. Our recorder writes
// core/v1 Events (NewEventRecorder), which kubectl shows without it.
const (
	actionComputePodSets = "ComputePodSets"
	actionQueue          = "Queue"
	actionStart          = "Start"
	actionStop           = "Stop"
	actionGang           = "GangSchedule"
)
