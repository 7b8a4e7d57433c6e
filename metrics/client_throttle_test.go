package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// A request that waits for the client's budget is seen waiting: a real
// client-go REST client with a budget of one request at a time, its
// waits reported through client-go's hook as the manager wires it.
func TestClientThrottleObservesEachRequestsWaitOnTheRateLimiter(t *testing.T) {
	m := NewClientThrottle()
	was := clientmetrics.RateLimiterLatency
	clientmetrics.RateLimiterLatency = m
	t.Cleanup(func() { clientmetrics.RateLimiterLatency = was })

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	defer srv.Close()
	cfg := &rest.Config{
		Host:    srv.URL,
		QPS:     20, // a token every 50 ms
		Burst:   1,
		APIPath: "/api",
		ContentConfig: rest.ContentConfig{
			GroupVersion:         &schema.GroupVersion{Version: "v1"},
			NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		},
	}
	c, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const requests = 3
	for range requests {
		if err := c.Get().AbsPath("/api/v1/namespaces").Do(context.Background()).Error(); err != nil {
			t.Fatal(err)
		}
	}

	u, _ := url.Parse(srv.URL)
	if got := testutil.CollectAndCount(m); got != 1 {
		t.Fatalf("series: %d, want 1 (verb GET, host %s)", got, u.Host)
	}
	h := &dto.Metric{}
	if err := m.waits.WithLabelValues("GET", u.Host).(interface{ Write(*dto.Metric) error }).Write(h); err != nil {
		t.Fatal(err)
	}
	if got := h.GetHistogram().GetSampleCount(); got != requests {
		t.Errorf("waits observed: %d, want %d, one per request", got, requests)
	}
	// The first request had the burst's token; the two after it waited
	// for theirs, about 50 ms each.
	if got := h.GetHistogram().GetSampleSum(); got < 0.05 {
		t.Errorf("time waited: %.3f s, want the two requests past the burst to have waited for their tokens (≥ 0.05 s)", got)
	}
}
