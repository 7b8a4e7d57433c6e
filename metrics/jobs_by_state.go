package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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
	for i := range jobs.Items {
		job := &jobs.Items[i]
		switch _, _, finished := job.Finished(); {
		case finished:
			counts["Finished"]++
		case job.Runner() == trainjob.RunRemotely:
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
