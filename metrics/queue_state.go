package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// queueState counts TrainJobs and their Workloads from the informer cache
// when scraped, so it keeps no state of its own: jobs by state per queue,
// Workloads held out of the queue, and the oldest admission not started.
type queueState struct {
	client client.Reader
	now    func() time.Time
	jobs   *prometheus.Desc
	held   *prometheus.Desc
	stuck  *prometheus.Desc
}

func newQueueState(c client.Reader, now func() time.Time) *queueState {
	return &queueState{client: c, now: now,
		jobs: prometheus.NewDesc("trainjob_kueue_trainjobs",
			"TrainJobs by state (package lifecycle: NotQueued, Queued, Requeued, WaitingForRuntime, HeldByPolicy, HeldOnWorker, Inactive, QuotaReserved, Admitted, Running, Evicted, Finished, Failed) and LocalQueue (namespace, local_queue; empty without a queue-name label).",
			[]string{"namespace", "local_queue", "state"}, nil),
		held: prometheus.NewDesc("trainjob_kueue_held_workloads",
			"TrainJob Workloads trainjob-kueue holds out of the queue (deactivated, quota released), by reason: runtime (the job's runtime is missing or outgrown), policy (an admission policy refused the start).",
			[]string{"reason"}, nil),
		stuck: prometheus.NewDesc("trainjob_kueue_admitted_unstarted_oldest_seconds",
			"Age of the oldest admission whose TrainJob is still suspended (0 when none): a start that does not happen.",
			nil, nil),
	}
}

func (q *queueState) Describe(ch chan<- *prometheus.Desc) {
	ch <- q.jobs
	ch <- q.held
	ch <- q.stuck
}

type queueKey struct{ namespace, localQueue string }

// Collect reads the cache's own objects: with thousands of TrainJobs a
// deep copy of each per scrape was the manager's largest allocation. The
// objects are only read here. Each job is counted by its lifecycle state,
// every state said (0 where none) for each LocalQueue seen.
func (q *queueState) Collect(ch chan<- prometheus.Metric) {
	var jobs trainjob.TrainJobList
	if err := q.client.List(context.Background(), &jobs, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(q.jobs, err)
		return
	}
	var wls kueue.WorkloadList
	if err := q.client.List(context.Background(), &wls, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(q.jobs, err)
		return
	}
	index := jobworkload.NewIndex(wls.Items)
	counts := map[queueKey]map[lifecycle.State]float64{}
	var oldest time.Duration
	for i := range jobs.Items {
		job := &jobs.Items[i]
		k := queueKey{job.Namespace, job.Labels[constants.QueueLabel]}
		if counts[k] == nil {
			counts[k] = map[lifecycle.State]float64{}
		}
		wl := index.Of(job)
		st := lifecycle.Of(lifecycle.Observed{Job: job, Workload: wl}).State
		counts[k][st]++
		if st == lifecycle.Admitted {
			admitted := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
			oldest = max(oldest, q.now().Sub(admitted.LastTransitionTime.Time))
		}
	}
	for k, byState := range counts {
		for _, state := range lifecycle.States() {
			ch <- prometheus.MustNewConstMetric(q.jobs, prometheus.GaugeValue, byState[state], k.namespace, k.localQueue, string(state))
		}
	}
	held := map[string]float64{"runtime": 0, "policy": 0}
	for i := range wls.Items {
		wl := &wls.Items[i]
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			continue
		}
		if _, ok := wl.Annotations[names.HeldForRuntimeAnnotation]; ok {
			held["runtime"]++
		}
		if _, ok := wl.Annotations[names.HeldByPolicyAnnotation]; ok {
			held["policy"]++
		}
	}
	for reason, n := range held {
		ch <- prometheus.MustNewConstMetric(q.held, prometheus.GaugeValue, n, reason)
	}
	ch <- prometheus.MustNewConstMetric(q.stuck, prometheus.GaugeValue, oldest.Seconds())
}
