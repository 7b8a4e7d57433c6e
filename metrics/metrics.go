package integration

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Metrics of the integration, prefixed trainjob_kueue_. One value per
// manager, registered on its registry: nothing is package state.
type Metrics struct {
	admissionToStart prometheus.Histogram
	injections       *prometheus.CounterVec
	restores         *prometheus.CounterVec
	podSetErrors     *prometheus.CounterVec
	gangs            *prometheus.CounterVec
}

// Label values of the result and reason labels.
const (
	resultDone   = "done"
	resultFailed = "failed"

	reasonAPIError = "APIError"
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
	}
}

// Register exposes the metrics, and the TrainJobs by state counted from c
// at every scrape, on reg.
func (m *Metrics) Register(reg prometheus.Registerer, c client.Reader) error {
	for _, col := range []prometheus.Collector{m.admissionToStart, m.injections, m.restores, m.podSetErrors, m.gangs, newJobsByState(c)} {
		if err := reg.Register(col); err != nil {
			return err
		}
	}
	return nil
}

// The methods below take a nil *Metrics: tests run without.

func (m *Metrics) started(admittedAt time.Time) {
	if m == nil || admittedAt.IsZero() {
		return
	}
	m.admissionToStart.Observe(time.Since(admittedAt).Seconds())
}

func (m *Metrics) injected(failure string) {
	if m == nil {
		return
	}
	if failure == "" {
		m.injections.WithLabelValues(resultDone, "").Inc()
		return
	}
	m.injections.WithLabelValues(resultFailed, failure).Inc()
}

func (m *Metrics) restored(failure string) {
	if m == nil {
		return
	}
	if failure == "" {
		m.restores.WithLabelValues(resultDone, "").Inc()
		return
	}
	m.restores.WithLabelValues(resultFailed, failure).Inc()
}

func (m *Metrics) podSetError(reason string) {
	if m == nil {
		return
	}
	m.podSetErrors.WithLabelValues(reason).Inc()
}

// jobsByState counts TrainJobs from the informer cache when scraped, so it
// keeps no state of its own.
type jobsByState struct {
	client client.Reader
	desc   *prometheus.Desc
}

func newJobsByState(c client.Reader) *jobsByState {
	return &jobsByState{client: c, desc: prometheus.NewDesc("trainjob_kueue_trainjobs",
		"TrainJobs by state: Queued (suspended, waiting for admission), Running (started on this cluster), Dispatched (handed to MultiKueue: queued here or run by a worker), Finished.",
		[]string{"state"}, nil)}
}

func (j *jobsByState) Describe(ch chan<- *prometheus.Desc) { ch <- j.desc }

// Collect counts the cache's own objects: with thousands of TrainJobs a
// deep copy of each per scrape was the manager's largest allocation. The
// objects are only read here.
func (j *jobsByState) Collect(ch chan<- prometheus.Metric) {
	var jobs trainjob.TrainJobList
	if err := j.client.List(context.Background(), &jobs, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(j.desc, err)
		return
	}
	counts := map[string]float64{"Queued": 0, "Running": 0, "Dispatched": 0, "Finished": 0}
	var job TrainJob
	for i := range jobs.Items {
		job.TrainJob = jobs.Items[i]
		switch _, _, finished := job.Finished(context.Background()); {
		case finished:
			counts["Finished"]++
		case runnerOf(job.Spec.ManagedBy) == runRemotely:
			counts["Dispatched"]++
		case ptr.Deref(job.Spec.Suspend, false):
			counts["Queued"]++
		default:
			counts["Running"]++
		}
	}
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(j.desc, prometheus.GaugeValue, n, state)
	}
}

// gang counts an action on PodGroups (gang.ActionResized, …).
func (m *Metrics) gang(action string) {
	if m == nil {
		return
	}
	m.gangs.WithLabelValues(action).Inc()
}
