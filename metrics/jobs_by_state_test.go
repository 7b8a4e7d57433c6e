package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// cacheReader lists TrainJobs the way controller-runtime's informer cache
// does (pkg/cache/internal/cache_reader.go): a deep copy of every object
// unless the list asks for none.
type cacheReader struct {
	jobs        []*trainjob.TrainJob
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
	j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint(state, i), Labels: map[string]string{"kueue.x-k8s.io/queue-name": "lq"}}}
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

func TestJobsByStateCountsTheCachesObjectsWithoutCopyingThem(t *testing.T) {
	r := &cacheReader{}
	for state, n := range map[string]int{"Queued": 4, "Running": 3, "Dispatched": 2, "Finished": 1} {
		for i := range n {
			r.jobs = append(r.jobs, jobIn(state, i))
		}
	}
	reg := prometheus.NewPedanticRegistry()
	if err := NewMetrics().Register(reg, r); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP trainjob_kueue_trainjobs TrainJobs by state: Queued (suspended, waiting for admission), Running (started on this cluster), Dispatched (handed to MultiKueue: queued here or run by a worker), Finished.
# TYPE trainjob_kueue_trainjobs gauge
trainjob_kueue_trainjobs{state="Dispatched"} 2
trainjob_kueue_trainjobs{state="Finished"} 1
trainjob_kueue_trainjobs{state="Queued"} 4
trainjob_kueue_trainjobs{state="Running"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "trainjob_kueue_trainjobs"); err != nil {
		t.Error(err)
	}
	if diff := cmp.Diff(struct{ Lists, DeepCopies int }{1, 0}, struct{ Lists, DeepCopies int }{r.listsCalled, r.deepCopies}); diff != "" {
		t.Errorf("one scrape (-want +got):\n%s", diff)
	}
}

// BenchmarkJobsByState is one scrape of the TrainJob gauge with 10,000
// TrainJobs in the cache.
func BenchmarkJobsByState(b *testing.B) {
	r := &cacheReader{}
	states := []string{"Queued", "Running", "Dispatched", "Finished"}
	for i := range 10000 {
		j := jobIn(states[i%4], i)
		// What a queued TrainJob carries: runtime patches, a status.
		j.Spec.RuntimePatches = make([]trainjob.RuntimePatch, 1)
		r.jobs = append(r.jobs, j)
	}
	c := newJobsByState(r)
	ch := make(chan prometheus.Metric, 8)
	b.ReportAllocs()
	for b.Loop() {
		go func() { c.Collect(ch); close(ch) }()
		for range ch {
		}
		ch = make(chan prometheus.Metric, 8)
	}
}
