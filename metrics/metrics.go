// Package metrics holds trainjob-kueue's Prometheus metrics.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Metrics of the integration, prefixed trainjob_kueue_. One value per
// manager, registered on its registry: nothing is package state.
type Metrics struct {
	admissionToStart prometheus.Histogram
	injections       *prometheus.CounterVec
	restores         *prometheus.CounterVec
	podSetErrors     *prometheus.CounterVec
	gangs            *prometheus.CounterVec
	boosts           *prometheus.CounterVec
	refusals         *prometheus.CounterVec
	notices          *prometheus.CounterVec
	noticeSaved      prometheus.Counter

	// registered are the collectors Register put on a registry, for
	// Unregister.
	registered []prometheus.Collector
}

// Label values of the result and reason labels.
const (
	resultDone   = "done"
	resultFailed = "failed"

	// ReasonAPIError: a write failed for the API server, not the job.
	ReasonAPIError = "APIError"
)

// NewMetrics makes the integration's metrics; Register exposes them.
// Reconciles are counted and timed by controller-runtime
// (controller_runtime_reconcile_total and _time_seconds, controller
// "trainjob"), on the same registry.
func NewMetrics() *Metrics {
	return &Metrics{
		admissionToStart: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "trainjob_kueue_admission_to_start_seconds",
			Help:    "From the Workload's admission to the TrainJob unsuspended with the admission injected.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}),
		injections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainjob_kueue_injections_total",
			Help: "Admissions written into a TrainJob's overrides, by result (done, failed) and reason of failure.",
		}, []string{"result", "reason"}),
		restores: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainjob_kueue_restores_total",
			Help: "Injected override entries removed after preemption, by result (done, failed) and reason of failure.",
		}, []string{"result", "reason"}),
		podSetErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainjob_kueue_podset_errors_total",
			Help: "TrainJobs whose PodSets could not be computed, by reason (RuntimeNotFound, UnsupportedRuntime, InvalidRuntime, APIError).",
		}, []string{"reason"}),
		gangs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainjob_kueue_gang_actions_total",
			Help: "What was done to PodGroups, by action: resized (Trainer's, for the wave being placed), created (ours, at admission), retried (a gang waiting for room).",
		}, []string{"action"}),
		boosts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainjob_kueue_priority_boost_writes_total",
			Help: "Writes of a TrainJob Workload's priority boost under a ClusterQueue's preemption-cost policy, by action (set, removed).",
		}, []string{"action"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainjob_kueue_webhook_refusals_total",
			Help: "TrainJob creates and updates the webhook refused, by operation (create, update) and the field refused first.",
		}, []string{"operation", "field"}),
		notices: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trainjob_kueue_preemption_notices_total",
			Help: "Preemption notices ended, by outcome: Checkpointed (the job reported a checkpoint made in its notice), RanOut (it did not in time), Completed (it finished in its notice), Ended (its Workload went away).",
		}, []string{"outcome"}),
		noticeSaved: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trainjob_kueue_preemption_notice_saved_seconds_total",
			Help: "Work, in seconds since each victim's last checkpoint before its eviction, that a stop at the eviction would have lost and a checkpoint in the notice kept.",
		}),
	}
}

// describe sends the descriptions of the manager's own metrics.
func (m *Metrics) describe(ch chan<- *prometheus.Desc) {
	for _, c := range []prometheus.Collector{m.admissionToStart, m.injections, m.restores, m.podSetErrors, m.gangs, m.boosts, m.refusals, m.notices, m.noticeSaved, newQueueState(nil, nil)} {
		c.Describe(ch)
	}
}

// Register exposes the metrics, and the TrainJobs by state counted from c
// at every scrape, on reg.
func (m *Metrics) Register(reg prometheus.Registerer, c client.Reader) error {
	for _, col := range []prometheus.Collector{m.admissionToStart, m.injections, m.restores, m.podSetErrors, m.gangs, m.boosts, m.refusals, m.notices, m.noticeSaved, newQueueState(c, time.Now)} {
		if err := reg.Register(col); err != nil {
			return err
		}
		m.registered = append(m.registered, col)
	}
	return nil
}

// Unregister takes what Register put on reg off it again: a manager
// restarted in the same process (a mode change) registers anew, its queue
// state read through its new client.
func (m *Metrics) Unregister(reg prometheus.Registerer) {
	for _, col := range m.registered {
		reg.Unregister(col)
	}
	m.registered = nil
}

// The methods below take a nil *Metrics: tests run without.

func (m *Metrics) Started(admittedAt time.Time) {
	if m == nil || admittedAt.IsZero() {
		return
	}
	m.admissionToStart.Observe(time.Since(admittedAt).Seconds())
}

func (m *Metrics) Injected(failure string) {
	if m == nil {
		return
	}
	if failure == "" {
		m.injections.WithLabelValues(resultDone, "").Inc()
		return
	}
	m.injections.WithLabelValues(resultFailed, failure).Inc()
}

func (m *Metrics) Restored(failure string) {
	if m == nil {
		return
	}
	if failure == "" {
		m.restores.WithLabelValues(resultDone, "").Inc()
		return
	}
	m.restores.WithLabelValues(resultFailed, failure).Inc()
}

func (m *Metrics) PodSetError(reason string) {
	if m == nil {
		return
	}
	m.podSetErrors.WithLabelValues(reason).Inc()
}

// Gang counts an action on PodGroups (gang.ActionResized, …).
func (m *Metrics) Gang(action string) {
	if m == nil {
		return
	}
	m.gangs.WithLabelValues(action).Inc()
}

// BoostWritten counts a write of a Workload's priority boost (set,
// removed).
func (m *Metrics) BoostWritten(action string) {
	if m == nil {
		return
	}
	m.boosts.WithLabelValues(action).Inc()
}

// WebhookRefused counts a create or update the webhook refused, by the
// field it named first.
func (m *Metrics) WebhookRefused(operation, field string) {
	if m == nil {
		return
	}
	m.refusals.WithLabelValues(operation, field).Inc()
}

// NoticeEnded counts a preemption notice's outcome and the work its
// checkpoint saved.
func (m *Metrics) NoticeEnded(outcome string, savedSeconds int64) {
	if m == nil {
		return
	}
	m.notices.WithLabelValues(outcome).Inc()
	m.noticeSaved.Add(float64(savedSeconds))
}
