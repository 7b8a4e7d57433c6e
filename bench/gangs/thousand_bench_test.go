package gangs_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

const (
	// bigGang is the pods of the large gang, one GPU each, on nodes of
	// gpusPerNode.
	bigGang = 1000
)

// BenchmarkAThousandPodGang: one TrainJob of 1,000 trainer pods × 1 GPU on
// 125 nodes of 8 GPUs, gang scheduled by its ClusterQueue's mode. Every
// pod's create goes through our pod webhook (in workload-api mode it reads
// the pod's lineage and puts it in its PodGroup): from the API server's
// audit log, the Job controller's pod creates' latency (pod-create-p50-ms,
// pod-create-p99-ms) and how many were refused or failed
// (pod-create-failures, 0 wanted); beside them the admission → all bound
// time, and what being called for every pod of a TrainJob costs: the calls
// of our pod webhook and the time each added to a create, as the API
// server measured them. Run with -benchtime=1x (make bench-gang).
func BenchmarkAThousandPodGang(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			k8s, c, down := clusterFor(b, ctx, mode)
			defer down()
			ns := setUp(b, ctx, k8s, mode.name, bigGang/gpusPerNode, gpusPerNode)
			fixtures.Create(b, ctx, k8s, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(bigGang),
				fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(1), Tolerations: []corev1.Toleration{toleration}, Annotations: fixtures.RunFor(time.Hour)}))
			before, err := webhookCalls(ctx, c, podWebhook)
			if err != nil {
				b.Fatal(err)
			}
			var placed []placement
			b.ResetTimer()
			for i := range b.N {
				placed = append(placed, placeOne(b, ctx, k8s, ns, fmt.Sprintf("big-%d", i), bigGang))
			}
			b.StopTimer()
			creates, err := podCreates(c.AuditLog(), ns)
			if err != nil {
				b.Fatal(err)
			}
			if len(creates) == 0 {
				b.Fatal("no pod create in the audit log")
			}
			took, ours, scheduler := phases(placed, creates)
			b.ReportMetric(ms(quantile(took, 0.5)), "ms-admitted-to-bound")
			b.ReportMetric(ms(quantile(ours, 0.5)), "ms-admitted-to-pods-created")
			b.ReportMetric(ms(quantile(scheduler, 0.5)), "ms-pods-created-to-bound")
			latencies, failed := createLatencies(creates)
			b.ReportMetric(ms(quantile(latencies, 0.5)), "pod-create-p50-ms")
			b.ReportMetric(ms(quantile(latencies, 0.99)), "pod-create-p99-ms")
			b.ReportMetric(float64(failed), "pod-create-failures")
			after, err := webhookCalls(ctx, c, podWebhook)
			if err != nil {
				b.Fatal(err)
			}
			calls := after.calls - before.calls
			b.ReportMetric(calls, "pod-webhook-calls")
			b.ReportMetric(1000*(after.seconds-before.seconds)/max(calls, 1), "pod-webhook-ms-per-call")
		})
	}
}

// podCreates are the pod creates in namespace ns the audit log recorded.
func podCreates(auditLog, ns string) ([]localcluster.AuditEvent, error) {
	events, err := localcluster.AuditEvents(auditLog, func(e *localcluster.AuditEvent) bool {
		return e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Resource == "pods" &&
			e.ObjectRef.Subresource == "" && e.ObjectRef.Namespace == ns
	})
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	return events, nil
}

// createLatencies are the creates' latencies, sorted, and how many did
// not succeed.
func createLatencies(creates []localcluster.AuditEvent) ([]time.Duration, int) {
	var took []time.Duration
	failed := 0
	for i := range creates {
		took = append(took, creates[i].Completed.Sub(creates[i].Received))
		if !creates[i].Succeeded() {
			failed++
		}
	}
	slices.Sort(took)
	return took, failed
}

// phases are the placements' times, each sorted: admitted → all bound,
// and that in two: until the API server answered the job's last pod
// create (our start, the Job controller, our pod webhook), and from then
// on (the scheduler).
func phases(placed []placement, creates []localcluster.AuditEvent) (took, ours, scheduler []time.Duration) {
	for _, p := range placed {
		took = append(took, p.bound.Sub(p.admitted))
		last := lastCreated(creates, p.submitted, p.bound)
		ours = append(ours, last.Sub(p.admitted))
		scheduler = append(scheduler, p.bound.Sub(last))
	}
	for _, d := range [][]time.Duration{took, ours, scheduler} {
		slices.Sort(d)
	}
	return took, ours, scheduler
}

// lastCreated is when the API server answered the last successful create
// received between from and to (one job's: the bench runs them one at a
// time).
func lastCreated(creates []localcluster.AuditEvent, from, to time.Time) time.Time {
	var last time.Time
	for i := range creates {
		e := &creates[i]
		if e.Succeeded() && e.Received.After(from) && e.Received.Before(to) && e.Completed.After(last) {
			last = e.Completed
		}
	}
	return last
}

// podWebhook is our pod webhook's name in the API server's metrics.
const podWebhook = "mpod.trainjob-kueue.dev"

// webhookTotals are the calls of one admission webhook the API server
// made so far, and the seconds they took, all outcomes.
type webhookTotals struct{ calls, seconds float64 }

// webhookCalls reads the API server's histogram of admission webhook
// durations for the webhook named name.
func webhookCalls(ctx context.Context, c *localcluster.Cluster, name string) (webhookTotals, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return webhookTotals{}, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return webhookTotals{}, err
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return webhookTotals{}, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	var t webhookTotals
	for line := range strings.Lines(string(raw)) {
		metric, value, ok := strings.Cut(strings.TrimSpace(line), "} ")
		if !ok || !strings.Contains(metric, `name="`+name+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(metric, "apiserver_admission_webhook_admission_duration_seconds_sum{"):
			t.seconds += v
		case strings.HasPrefix(metric, "apiserver_admission_webhook_admission_duration_seconds_count{"):
			t.calls += v
		}
	}
	return t, nil
}
