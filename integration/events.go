package integration

// Reasons of the events we record on TrainJobs. Stable: users and alerts
// match on them.
const (
	ReasonRuntimeNotFound      = "RuntimeNotFound"
	ReasonUnsupportedRuntime   = "UnsupportedRuntime"
	ReasonInvalidRuntime       = "InvalidRuntime"
	ReasonInjected             = "Injected"
	ReasonRestored             = "Restored"
	ReasonNodeSelectorConflict = "NodeSelectorConflict"
	ReasonTopologyUnsupported  = "TopologyUnsupported"
	// ReasonNoMultiKueueCheck: a job for MultiKueue was admitted by a
	// ClusterQueue that does not dispatch.
	ReasonNoMultiKueueCheck = "NoMultiKueueCheck"
)

// Actions of our events (events.k8s.io/v1): what we were doing when the
// event happened.
const (
	actionComputePodSets = "ComputePodSets"
	actionStart          = "Start"
	actionStop           = "Stop"
	actionGang           = "GangSchedule"
)
