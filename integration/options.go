package integration

import (
	"time"

	"k8s.io/client-go/tools/events"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// Options configure the integration. The Kueue-facing ones must agree with
// the deployed Kueue's Configuration; cmd/trainjob-kueue reads them from it.
type Options struct {
	// Recorder records our events (cmd/trainjob-kueue builds it once: NewEventRecorder).
	Recorder events.EventRecorder
	// Shape is the override field of the installed Trainer API version.
	Shape shape.Shape
	// PodSets tunes the PodSet projection (topology, API defaults).
	PodSets podsets.Options

	// KueueSettings are the deployed Kueue's that ours must agree with.
	discovery.KueueSettings
	// PodGroups: scheduler-plugins' PodGroup CRD is installed. Without it
	// Trainer's PodGroups are not kept and gang opt-ins are refused.
	PodGroups bool
	// WorkloadAPI: the API server serves Kubernetes' own PodGroups
	// (scheduling.k8s.io/v1beta1): gang mode workload-api can be had.
	WorkloadAPI bool
	// GangRetryInterval: how often a started job's gang that waits for
	// room is retried; zero means gang.DefaultRetryInterval.
	GangRetryInterval time.Duration
	// PolicyRetry: how long a job whose start an admission policy refused
	// is held before it is queued again, doubling with each refusal up to
	// 15 minutes; zero means one minute.
	PolicyRetry time.Duration
	// Metrics, when set, records the integration's metrics.
	Metrics *metrics.Metrics
	// Runtimes is the source of runtimes and PodSets the manager's
	// controllers share (one memo); nil makes one of the reconciler's own.
	Runtimes *runtimesource.Source
	// ManagerUsername is the identity our manager writes TrainJobs with; the
	// webhook lets only it touch entries carrying our ownership marker.
	ManagerUsername string
}
