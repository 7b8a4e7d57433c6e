package integration

import (
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// Options configure the integration. The Kueue-facing ones must agree with
// the deployed Kueue's Configuration; cmd/trainjob-kueue reads them from it.
type Options struct {
	// Recorder records our events; nil means NewEventRecorder's.
	Recorder events.EventRecorder
	// Shape is the override field of the installed Trainer API version.
	Shape shape.Shape
	// PodSets tunes the PodSet projection (topology, API defaults).
	PodSets podsets.Options

	ManageJobsWithoutQueueName   bool
	ManagedJobsNamespaceSelector labels.Selector
	WaitForPodsReady             bool
	// PodsReadyTimeouts are waitForPodsReady's, to warn about gangs that
	// Kueue would evict before the scheduler gives up on them.
	PodsReadyTimeouts quota.PodsReadyTimeouts
	LabelKeysToCopy   []string
	// PodGroups: scheduler-plugins' PodGroup CRD is installed. Without it
	// Trainer's PodGroups are not kept and gang opt-ins are refused.
	PodGroups bool
	// GangRetryInterval: how often a started job's gang that waits for
	// room is retried; zero means gang.DefaultRetryInterval.
	GangRetryInterval time.Duration
	// PolicyRetry: how long a job whose start an admission policy refused
	// is held before it is queued again, doubling with each refusal up to
	// 15 minutes; zero means one minute.
	PolicyRetry time.Duration
	// LocalQueueDefaulting mirrors Kueue's feature gate: a job without a
	// queue name goes to the namespace's LocalQueue named "default".
	LocalQueueDefaulting bool
	// MultiKueue: Kueue here dispatches TrainJobs to worker clusters
	// (TrainJob in multiKueue.externalFrameworks, the MultiKueue gates on).
	// The webhook then hands jobs on queues with a MultiKueue admission
	// check to MultiKueue through spec.managedBy.
	MultiKueue bool
	// Metrics, when set, records the integration's metrics.
	Metrics *Metrics
	// ManagerUsername is the identity our manager writes TrainJobs with; the
	// webhook lets only it touch entries carrying our ownership marker.
	ManagerUsername string
}
