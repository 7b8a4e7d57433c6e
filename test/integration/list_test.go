package integration_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/overview"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// countingReader counts the requests a reader makes of the API server
// (list reads its kinds side by side).
type countingReader struct {
	client.Reader
	requests atomic.Int32
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.requests.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.requests.Add(1)
	return c.Reader.List(ctx, list, opts...)
}

// The list of a namespace of 150 queued TrainJobs, against the real API
// server: every job in its state, in one request per kind — as many as for
// a namespace of 3.
func TestListReadsOncePerKindHoweverManyJobs(t *testing.T) {
	// As the command reads: with our TrainJob types.
	reader, err := client.New(restCfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{3, 150}
	var requests []int
	for _, n := range sizes {
		ns := newNamespace(t)
		lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 0})
		create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
		for i := range n {
			create(t, trainJob(ns, fmt.Sprintf("job-%d", i), "rt", lq))
		}
		eventually(t, fmt.Sprintf("%d Workloads", n), func() error {
			var wls kueue.WorkloadList
			if err := k8s.List(ctx, &wls, client.InNamespace(ns)); err != nil {
				return err
			}
			if len(wls.Items) != n {
				return fmt.Errorf("%d Workloads", len(wls.Items))
			}
			return nil
		})
		c := &countingReader{Reader: reader}
		in, _, err := overview.Fetch(ctx, c, nil, overview.Options{Namespace: ns}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		rows := overview.Rows(in)
		if len(rows) != n {
			t.Fatalf("%d rows, want %d", len(rows), n)
		}
		for _, r := range rows {
			if r.State != lifecycle.Queued || r.ClusterQueue != ns || r.Pods != 1 || r.GPUs != 1 {
				t.Fatalf("row %+v, want a queued job of 1 pod and 1 GPU in ClusterQueue %s", r, ns)
			}
		}
		requests = append(requests, int(c.requests.Load()))
	}
	if requests[0] != 4 || requests[1] != requests[0] {
		t.Errorf("requests for %v jobs: %v; want 4 each (TrainJobs, Workloads, LocalQueues, running pods)", sizes, requests)
	}
}
