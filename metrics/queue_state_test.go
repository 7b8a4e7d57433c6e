package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// cacheReader lists TrainJobs and Workloads the way controller-runtime's
// informer cache does (pkg/cache/internal/cache_reader.go): a deep copy of
// every object unless the list asks for none.
type cacheReader struct {
	jobs        []*trainjob.TrainJob
	workloads   []*kueue.Workload
	deepCopies  int
	listsCalled int
}

func (r *cacheReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return fmt.Errorf("not served")
}

func (r *cacheReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.listsCalled++
	lo := client.ListOptions{}
	lo.ApplyOptions(opts)
	copyEach := !ptr.Deref(lo.UnsafeDisableDeepCopy, false)
	if wls, ok := list.(*kueue.WorkloadList); ok {
		for _, wl := range r.workloads {
			if copyEach {
				wl = wl.DeepCopy()
				r.deepCopies++
			}
			wls.Items = append(wls.Items, *wl)
		}
		return nil
	}
	l := list.(*trainjob.TrainJobList)
	l.Items = make([]trainjob.TrainJob, 0, len(r.jobs))
	for _, j := range r.jobs {
		if copyEach {
			j = j.DeepCopy()
			r.deepCopies++
		}
		l.Items = append(l.Items, *j)
	}
	return nil
}

func jobIn(state string, i int) *trainjob.TrainJob {
	j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint(state, i), UID: types.UID(fmt.Sprint(state, i)), Labels: map[string]string{"kueue.x-k8s.io/queue-name": "lq"}}}
	j.Spec.RuntimeRef.Name = "torch"
	j.Spec.Suspend = ptr.To(state == "Queued")
	switch state {
	case "Dispatched":
		j.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
		j.Spec.Suspend = ptr.To(true)
	case "Finished":
		j.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
	}
	return j
}

// workloadOf is the Workload of job j, admitted at admittedAt when not
// zero, with annotations.
func workloadOf(j *trainjob.TrainJob, admittedAt time.Time, annotations map[string]string) *kueue.Workload {
	key, _ := jobworkload.Key(j)
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Annotations: annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: trainjob.GVK.GroupVersion().String(), Kind: trainjob.GVK.Kind, Name: j.Name, UID: j.UID, Controller: ptr.To(true)}}}}
	if !admittedAt.IsZero() {
		wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(admittedAt)}}
	}
	return wl
}

func TestQueueStateCountsTheCachesObjectsWithoutCopyingThem(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	r := &cacheReader{}
	for state, n := range map[string]int{"Queued": 4, "Running": 3, "Dispatched": 2, "Finished": 1} {
		for i := range n {
			r.jobs = append(r.jobs, jobIn(state, i))
		}
	}
	noQueue := jobIn("Running", 9)
	noQueue.Namespace, noQueue.Labels = "other", nil
	r.jobs = append(r.jobs, noQueue)
	held := func(wl *kueue.Workload) *kueue.Workload { wl.Spec.Active = ptr.To(false); return wl }
	r.workloads = []*kueue.Workload{
		// Admitted 5 minutes ago, still suspended: a start not made.
		workloadOf(jobIn("Queued", 0), now.Add(-5*time.Minute), nil),
		// Admitted an hour ago and running: started.
		workloadOf(jobIn("Running", 0), now.Add(-time.Hour), nil),
		workloadOf(jobIn("Running", 1), now.Add(-time.Hour), nil),
		workloadOf(jobIn("Running", 2), now.Add(-time.Hour), nil),
		held(workloadOf(jobIn("Queued", 1), time.Time{}, map[string]string{names.HeldForRuntimeAnnotation: "TrainingRuntime ns/torch"})),
		held(workloadOf(jobIn("Queued", 2), time.Time{}, map[string]string{names.HeldByPolicyAnnotation: `{"policy":"p","since":"2026-11-27T11:00:00Z","attempt":1}`})),
	}
	reg := prometheus.NewPedanticRegistry()
	for _, c := range []prometheus.Collector{newQueueState(r, func() time.Time { return now })} {
		if err := reg.Register(c); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP trainjob_kueue_trainjobs TrainJobs by state (package lifecycle: NotQueued, Queued, Requeued, WaitingForRuntime, HeldByPolicy, HeldOnWorker, Inactive, QuotaReserved, Admitted, Running, Evicted, Finished, Failed) and LocalQueue (namespace, local_queue; empty without a queue-name label).
# TYPE trainjob_kueue_trainjobs gauge
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="Admitted"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="Evicted"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="Failed"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="Finished"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="HeldByPolicy"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="HeldOnWorker"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="Inactive"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="NotQueued"} 1
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="Queued"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="QuotaReserved"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="Requeued"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="Running"} 0
trainjob_kueue_trainjobs{local_queue="",namespace="other",state="WaitingForRuntime"} 0
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="Admitted"} 1
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="Evicted"} 0
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="Failed"} 0
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="Finished"} 1
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="HeldByPolicy"} 1
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="HeldOnWorker"} 0
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="Inactive"} 0
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="NotQueued"} 0
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="Queued"} 3
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="QuotaReserved"} 0
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="Requeued"} 0
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="Running"} 3
trainjob_kueue_trainjobs{local_queue="lq",namespace="ns",state="WaitingForRuntime"} 1
# HELP trainjob_kueue_held_workloads TrainJob Workloads trainjob-kueue holds out of the queue (deactivated, quota released), by reason: runtime (the job's runtime is missing or outgrown), policy (an admission policy refused the start).
# TYPE trainjob_kueue_held_workloads gauge
trainjob_kueue_held_workloads{reason="policy"} 1
trainjob_kueue_held_workloads{reason="runtime"} 1
# HELP trainjob_kueue_admitted_unstarted_oldest_seconds Age of the oldest admission whose TrainJob is still suspended (0 when none): a start that does not happen.
# TYPE trainjob_kueue_admitted_unstarted_oldest_seconds gauge
trainjob_kueue_admitted_unstarted_oldest_seconds 300
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if diff := cmp.Diff(struct{ Lists, DeepCopies int }{2, 0}, struct{ Lists, DeepCopies int }{r.listsCalled, r.deepCopies}); diff != "" {
		t.Errorf("one scrape (-want +got):\n%s", diff)
	}
}

// BenchmarkJobsByState is one scrape of the queue-state gauges with
// 10,000 TrainJobs in the cache.
func BenchmarkJobsByState(b *testing.B) {
	r := &cacheReader{}
	states := []string{"Queued", "Running", "Dispatched", "Finished"}
	for i := range 10000 {
		j := jobIn(states[i%4], i)
		// What a queued TrainJob carries: runtime patches, a status.
		j.Spec.RuntimePatches = make([]trainjob.RuntimePatch, 1)
		r.jobs = append(r.jobs, j)
	}
	c := newQueueState(r, time.Now)
	ch := make(chan prometheus.Metric, 8)
	b.ReportAllocs()
	for b.Loop() {
		go func() { c.Collect(ch); close(ch) }()
		for range ch {
		}
		ch = make(chan prometheus.Metric, 8)
	}
}
