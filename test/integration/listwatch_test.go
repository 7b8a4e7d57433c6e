package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/overview"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// countingTransport counts the requests that are not watches.
type countingTransport struct {
	next  http.RoundTripper
	reads atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Query().Get("watch") != "true" {
		c.reads.Add(1)
	}
	return c.next.RoundTrip(r)
}

// list --watch -A lists once: after the informers' first list, a listing
// reads memory (no request to the API server), and says what a listing
// through the API server says.
func TestListWatchingEveryNamespaceListsOnce(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 0})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(1)}))
	for i := range 20 {
		create(t, trainJob(ns, fmt.Sprintf("job-%d", i), "rt", lq))
	}
	eventually(t, "20 Workloads", func() error {
		var wls kueue.WorkloadList
		if err := k8s.List(ctx, &wls, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(wls.Items) != 20 {
			return fmt.Errorf("%d Workloads", len(wls.Items))
		}
		return nil
	})
	counted := &countingTransport{}
	cfg := rest.CopyConfig(restCfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counted.next = rt; return counted })
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	watching, err := overview.Watching(watchCtx, cfg, scheme.New(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := client.New(restCfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	rowsOf := func(r client.Reader) []overview.Row {
		in, _, err := overview.Fetch(ctx, r, nil, overview.Options{}, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		var mine []overview.Row
		for _, row := range overview.Rows(in) {
			if row.Namespace == ns {
				mine = append(mine, row)
			}
		}
		return mine
	}
	rowsOf(watching) // a kind the informers did not start with starts now
	before := counted.reads.Load()
	for range 3 {
		got := rowsOf(watching)
		if diff := cmp.Diff(rowsOf(direct), got); diff != "" || len(got) != 20 {
			t.Fatalf("watching, %d rows, unlike a listing through the API server (-direct +watching):\n%s", len(got), diff)
		}
	}
	if after := counted.reads.Load(); after != before {
		t.Errorf("three listings while watching asked the API server %d times, want none", after-before)
	}
}
