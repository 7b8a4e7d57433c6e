package metrics

import (
	"context"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ClientThrottle is the time each API request of the manager waited on
// its client-side rate limiter (--kube-api-qps, --kube-api-burst), under
// the name and labels Kubernetes' own components give it. controller-runtime
// reports client-go's request counts but not these waits, and a manager
// short of budget looks, from outside, like a slow API server.
//
// It is what client-go reports the waits to
// (k8s.io/client-go/tools/metrics.RateLimiterLatency): client-go has one
// such hook per process, so the manager's main makes one ClientThrottle,
// registers it and sets the hook once, for every run of the process.
type ClientThrottle struct {
	waits *prometheus.HistogramVec
}

func NewClientThrottle() *ClientThrottle {
	return &ClientThrottle{waits: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rest_client_rate_limiter_duration_seconds",
		Help:    "Client-side rate limiter latency in seconds: how long each API request of the manager waited for its client's budget (--kube-api-qps, --kube-api-burst), by verb and host.",
		Buckets: []float64{0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60},
	}, []string{"verb", "host"})}
}

// Observe implements client-go's LatencyMetric.
func (c *ClientThrottle) Observe(_ context.Context, verb string, u url.URL, latency time.Duration) {
	c.waits.WithLabelValues(verb, u.Host).Observe(latency.Seconds())
}

func (c *ClientThrottle) Describe(ch chan<- *prometheus.Desc) { c.waits.Describe(ch) }
func (c *ClientThrottle) Collect(ch chan<- prometheus.Metric) { c.waits.Collect(ch) }
