// Package settings holds what the manager learned at start and shares with
// every controller and webhook it runs: the installed Trainer's shape, the
// deployed Kueue's settings, the gang schedulers served, the manager's
// identity, and the one recorder, metrics and runtime source they use.
// What one controller alone is tuned by stays in its own options
// (integration.Options' retry intervals).
package settings

import (
	"k8s.io/client-go/tools/events"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// Shared are the manager-wide settings. The Kueue-facing ones must agree
// with the deployed Kueue's Configuration; cmd/trainjob-kueue reads them
// from it.
type Shared struct {
	// Recorder records our events (cmd/trainjob-kueue builds it once:
	// integration.NewEventRecorder).
	Recorder events.EventRecorder
	// Shape is the override field of the installed Trainer API version.
	Shape shape.Shape
	// PodSets tunes the PodSet projection (topology, API defaults).
	PodSets podsets.Options

	// KueueSettings are the deployed Kueue's that ours must agree with.
	discovery.KueueSettings
	// Gangs are the gang schedulers whose PodGroups the cluster serves:
	// without scheduler-plugins' CRD Trainer's PodGroups are not kept and
	// coscheduling opt-ins are refused; without the Workload API, mode
	// workload-api is.
	Gangs gang.Schedulers
	// Metrics, when set, records the manager's metrics.
	Metrics *metrics.Metrics
	// Runtimes is the source of runtimes and PodSets the manager's
	// controllers share (one memo); nil makes the integration one of its
	// own.
	Runtimes *runtimesource.Source
	// ManagerUsername is the identity our manager writes TrainJobs with; the
	// webhook lets only it touch entries carrying our ownership marker.
	ManagerUsername string
}
