// Package names declares every name trainjob-kueue owns on the API server
// — labels, annotations, keys, its field manager — and the names of Kueue's
// in-tree integration it recognises. Every name in one file, names.go, so
// README's "Names we own" can be checked against it (names_test.go) and
// nothing is named twice; what a mark carries is read beside it.
package names

// Ours, under the trainjob-kueue.dev/ domain.
const (
	// OwnedLabel: "true" in an override entry's metadata labels
	// (podTemplateOverrides, runtimePatches' pod templates) marks it as
	// injected at admission; it reaches the pods. Only trainjob-kueue may
	// write entries carrying it.
	OwnedLabel = "trainjob-kueue.dev/owned"
	// InjectedAnnotation on a TrainJob (Trainer v2.0) records, as JSON, what
	// the admission added to each spec.podSpecOverrides entry, which has no
	// metadata of its own, so the stop removes exactly that.
	InjectedAnnotation = "trainjob-kueue.dev/injected"
	// RuntimePatchManager is the manager key of our spec.runtimePatches
	// entry (Trainer v2.2+).
	RuntimePatchManager = "trainjob-kueue.dev/manager"
	// GangSchedulingAnnotation on a ClusterQueue or TrainJob:
	// "coscheduling" gives a job scheduler-plugins PodGroups per wave of
	// roles; a ClusterQueue's binds every job it admits.
	GangSchedulingAnnotation = "trainjob-kueue.dev/gang-scheduling"
	// GangScheduleTimeoutAnnotation on a ClusterQueue or TrainJob: the
	// scheduleTimeoutSeconds of those PodGroups.
	GangScheduleTimeoutAnnotation = "trainjob-kueue.dev/gang-schedule-timeout-seconds"
	// GangRetriedAtAnnotation on a PodGroup: when its waiting gang was last
	// retried.
	GangRetriedAtAnnotation = "trainjob-kueue.dev/gang-retried-at"
	// PodGroupLabel on a pod of a TrainJob gang scheduled in mode
	// "workload-api" (injected at admission through the job's overrides)
	// names the PodGroup (scheduling.k8s.io/v1beta1) of its wave; our pod
	// webhook, once the pod's owners are proven the job's by UID and the
	// group the job's own, sets spec.schedulingGroup.podGroupName from it.
	PodGroupLabel = "trainjob-kueue.dev/pod-group"
	// PodGroupJobLabel on a PodGroup (scheduling.k8s.io/v1beta1) we made:
	// the TrainJob it is for, to find a job's groups by (its controller
	// reference, by UID, proves them).
	PodGroupJobLabel = "trainjob-kueue.dev/trainjob"
	// PodGroupAdmissionLabel on a PodGroup (scheduling.k8s.io/v1beta1) we
	// made: the admission it is for (gang.AdmissionToken); the groups of
	// an admission that ended are deleted.
	PodGroupAdmissionLabel = "trainjob-kueue.dev/admission"
	// PodGroupRolesAnnotation on a PodGroup (scheduling.k8s.io/v1beta1) we
	// made: the roles (replicatedJobs) of its wave, comma-separated.
	PodGroupRolesAnnotation = "trainjob-kueue.dev/roles"
	// HeldForRuntimeAnnotation on a Workload: trainjob-kueue deactivated it
	// (spec.active=false) because it reserved quota while its TrainJob
	// can't start for want of its runtime (it does not exist, or, before
	// Trainer v2.3, it was edited since Trainer built the job's JobSet), so
	// the quota goes back and Kueue does not admit it again meanwhile; the
	// value is the runtime. It is reactivated, and the mark removed, once
	// the job can start from the runtime again.
	HeldForRuntimeAnnotation = "trainjob-kueue.dev/held-for-runtime"
	// HeldByPolicyAnnotation on a Workload: trainjob-kueue deactivated it
	// because a ValidatingAdmissionPolicy refused its TrainJob's start, so
	// the quota goes back while an admin mends the policy; the value (JSON:
	// policy, since, attempt) is kept when the Workload is queued again
	// after the backoff, so each further refusal waits longer.
	HeldByPolicyAnnotation = "trainjob-kueue.dev/held-by-policy"
	// PreemptionCostAnnotation on a ClusterQueue: the batch admin's
	// preemption-cost policy (JSON, package preemptcost), by which the
	// Workloads of its TrainJobs get Kueue's priority boost.
	PreemptionCostAnnotation = "trainjob-kueue.dev/preemption-cost"
	// CheckpointIntervalAnnotation on a TrainJob: how often it checkpoints
	// (a Go duration, at least a minute), for a preemption-cost policy's
	// checkpoint part when the job reports no checkpoint time.
	CheckpointIntervalAnnotation = "trainjob-kueue.dev/checkpoint-interval"
	// PreemptionNoticeAnnotation on a TrainJob: the preemption notice the
	// job asks for (a Go duration, 0 for none), never more than its
	// ClusterQueue's preemption-cost policy gives (its notice part).
	PreemptionNoticeAnnotation = "trainjob-kueue.dev/preemption-notice"
	// PreemptingAnnotation on a Workload and on its job's running pods,
	// written by trainjob-kueue while a preempted job is in its notice:
	// JSON {"since": s, "until": u} in Unix seconds (the eviction, the
	// notice's end). Pods read it through the downward API; list, explain
	// and the queue condition from the Workload. Derived from Kueue's
	// eviction and the policy, so a restarted manager writes the same.
	PreemptingAnnotation = "trainjob-kueue.dev/preempting"
	// PriorityBoostAnnotation on a Workload: the parts (JSON) of the
	// kueue.x-k8s.io/priority-boost we set; it marks that boost as ours.
	PriorityBoostAnnotation = "trainjob-kueue.dev/priority-boost"
	// AdmittedCondition is our condition in a TrainJob's
	// status.conditions: True once Kueue admitted the job, False with the
	// lifecycle's state as its reason while it is queued, requeued, held
	// or being evicted (package queuecondition).
	AdmittedCondition = "trainjob-kueue.dev/Admitted"
	// RuntimeIndex is the manager's field index of TrainJobs by runtime.
	RuntimeIndex = "trainjob-kueue.dev/runtime"
	// FieldManager applies our PodGroups (server-side apply).
	FieldManager = "trainjob-kueue"
	// WaveEndFieldManager applies, in one request, a Workload's
	// reclaimable pods and its PodsReady condition when a wave of its job
	// ends (integration/wave_end.go).
	WaveEndFieldManager = "trainjob-kueue-wave-end"
	// ModeChangeLease, a coordination.k8s.io Lease in the manager's
	// namespace, is the turn a replica holds while it restarts for a mode
	// change (standby <-> taking TrainJobs), so two replicas never restart
	// at once and the webhook Service always has one answering.
	ModeChangeLease = "trainjob-kueue.dev-mode-change"
	// RollCallLease, a Lease beside it, holds each ready replica's latest
	// answer (an annotation ready.trainjob-kueue.dev/<replica>: a time): a
	// replica that restarts for a mode change drains only when another
	// answered lately (restartwatch.RollCall).
	RollCallLease = "trainjob-kueue.dev-replicas"
)

// Our admission webhooks, by the names their configurations give them
// (config/webhook/manifests.yaml, generated from the markers in webhook/).
const (
	// TrainJobDefaulter suspends a queued TrainJob at create and keeps
	// injected entries ours alone.
	TrainJobDefaulter = "mtrainjob.trainjob-kueue.dev"
	// TrainJobValidator refuses a TrainJob that can't be queued, naming
	// the field and the fix.
	TrainJobValidator = "vtrainjob.trainjob-kueue.dev"
	// JobSetDefaulter takes Kueue's default queue and suspension off the
	// JobSet of a TrainJob we queue, so a default LocalQueue queues the job
	// once, as its TrainJob.
	JobSetDefaulter = "mjobset.trainjob-kueue.dev"
	// JobDefaulter takes Kueue's default queue and suspension off the Jobs
	// of a TrainJob's JobSet where Kueue's JobSet integration is off, for
	// the same reason.
	JobDefaulter = "mjob.trainjob-kueue.dev"
	// PodDefaulter undoes Kueue's pod integration's queueing of a pod of a
	// TrainJob we queue (its default LocalQueue), for the same reason.
	PodDefaulter = "mpod.trainjob-kueue.dev"
	// ClusterQueueValidator refuses a ClusterQueue whose preemption-cost
	// or gang-scheduling annotation can't be read (failurePolicy Ignore:
	// it never stands between an admin and Kueue).
	ClusterQueueValidator = "vclusterqueue.trainjob-kueue.dev"
)

// Kueue's in-tree TrainJob integration's, recognised so an admin can
// switch integrations with jobs in flight.
const (
	// InTreePodSetLabel marks the override entries it injects.
	InTreePodSetLabel = "kueue.x-k8s.io/podset"
	// InTreeRuntimePatchManager keys its spec.runtimePatches entry.
	InTreeRuntimePatchManager = "kueue.x-k8s.io/manager"
)

// KueuePriorityBoostAnnotation is Kueue's priority boost on a Workload
// (KEP-7990), which a preemption-cost policy sets: Kueue's name, written
// by us (preemptcost/annotation.go alone).
const KueuePriorityBoostAnnotation = "kueue.x-k8s.io/priority-boost"
