package overview

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// countingPending answers the visibility API's pending workloads of each
// ClusterQueue, counting the requests.
type countingPending struct {
	calls map[string]int
	err   error
}

func (p *countingPending) ClusterQueuePositions(_ context.Context, cq string) (map[string]int32, error) {
	p.calls[cq]++
	if p.err != nil {
		return nil, p.err
	}
	return map[string]int32{"ns0/" + workloadName("j0"): 0}, nil
}

// cluster holds n queued TrainJobs (their Workloads pending in two
// ClusterQueues) and n running pods, and counts the reads made of it.
func cluster(t *testing.T, n int) (client.Reader, *atomic.Int32) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, kueue.AddToScheme, trainjob.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	var objs []client.Object
	for i := range 2 {
		objs = append(objs, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns%d", i), Name: "lq"},
			Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(fmt.Sprintf("cq%d", i))}})
	}
	for i := range n {
		ns, name := fmt.Sprintf("ns%d", i%2), fmt.Sprintf("j%d", i)
		j := job(name)
		j.Namespace, j.ResourceVersion = ns, ""
		wl := workload(name, nil)
		wl.Namespace = ns
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-node-0", Labels: map[string]string{jobsetapi.JobSetNameKey: name}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		objs = append(objs, &j, &wl, pod)
	}
	reads := &atomic.Int32{}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, "status.phase", func(o client.Object) []string { return []string{string(o.(*corev1.Pod).Status.Phase)} }).
		WithInterceptorFuncs(interceptor.Funcs{
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				reads.Add(1)
				return c.List(ctx, list, opts...)
			},
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				reads.Add(1)
				return c.Get(ctx, key, obj, opts...)
			},
		}).Build()
	return c, reads
}

// The list costs one request per kind and one per ClusterQueue with
// pending jobs, however many jobs there are.
func TestFetchReadsOncePerKindNotPerJob(t *testing.T) {
	var counts []string
	for _, n := range []int{3, 300} {
		c, reads := cluster(t, n)
		pending := &countingPending{calls: map[string]int{}}
		in, notes, err := Fetch(t.Context(), c, pending, Options{}, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(notes) != 0 {
			t.Errorf("notes %v", notes)
		}
		rows := Rows(in)
		if len(rows) != n {
			t.Fatalf("%d rows, want %d", len(rows), n)
		}
		if reads.Load() != 4 || len(pending.calls) != 2 || pending.calls["cq0"] != 1 || pending.calls["cq1"] != 1 {
			t.Errorf("%d jobs: %d reads and visibility requests %v, want 4 (TrainJobs, Workloads, LocalQueues, pods) and one per ClusterQueue", n, reads.Load(), pending.calls)
		}
		for _, r := range rows {
			if r.PodsRunning != 1 || r.ClusterQueue == "" || r.State != lifecycle.Queued {
				t.Fatalf("row %+v", r)
			}
		}
		if rows[0].Name != "j0" || rows[0].Position == nil || *rows[0].Position != 0 {
			t.Errorf("first row %+v, want j0 at the head of its ClusterQueue", rows[0])
		}
		counts = append(counts, fmt.Sprint(reads.Load()))
	}
	t.Logf("reads for 3 and 300 jobs: %s", strings.Join(counts, ", "))
}

// Kueue's visibility API not served: the list goes on without positions,
// and says why.
func TestFetchWithoutTheVisibilityAPI(t *testing.T) {
	c, _ := cluster(t, 2)
	in, notes, err := Fetch(t.Context(), c, &countingPending{calls: map[string]int{}, err: errors.New("not served")}, Options{Namespace: "ns0"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "no positions in ClusterQueue cq0: not served") {
		t.Errorf("notes %q", notes)
	}
	rows := Rows(in)
	if len(rows) != 1 || rows[0].Position != nil || rows[0].Namespace != "ns0" {
		t.Errorf("rows %+v, want ns0's one job without a position", rows)
	}
}

// A list that fails fails the listing, naming the kind, instead of showing
// jobs without their Workloads as if they had none.
func TestFetchFailsOnAFailedList(t *testing.T) {
	c, _ := cluster(t, 1)
	failing := interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*kueue.WorkloadList); ok {
				return errors.New("connection refused")
			}
			return c.List(ctx, list, opts...)
		}})
	if _, _, err := Fetch(t.Context(), failing, nil, Options{}, now); err == nil || !strings.Contains(err.Error(), "listing Workloads: connection refused") {
		t.Errorf("error %v, want the Workloads' list's", err)
	}
}
