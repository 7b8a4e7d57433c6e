package deployed_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

var eventually = poll.Eventually

// pool: the GPUs jobs run on; quota for gpuQuota of them, so a burst of
// jobs queues.
var pool = fixtures.Pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: gpuQuota}

const (
	gpuQuota = 8
	// jobGPUs: each job is one trainer node of two GPUs: four run at once.
	jobGPUs = 2
	// jobRuns: how long a job's pod runs.
	jobRuns = 6 * time.Second
)

// setUp makes a namespace with a LocalQueue over the GPU pool (nodes are
// made once for the cluster) and a one-node runtime, and waits until the
// shipped webhooks answer for it, so what follows starts from a working
// install.
func setUp(t *testing.T) (ns, lq string) {
	t.Helper()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "deployed-"}}
	if err := k8s.Create(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	ns = nsObj.Name
	nodesOnce.Do(func() {
		for i := range 2 {
			if err := localcluster.AddNode(ctx, k8s, fixtures.Node(fmt.Sprintf("gpu-%d", i), pool, gpuQuota/2)); err != nil {
				nodesErr = err
			}
		}
	})
	if nodesErr != nil {
		t.Fatal(nodesErr)
	}
	flavors, cq, q := fixtures.Queue(ns, ns, pool)
	for _, rf := range flavors {
		fixtures.Create(t, ctx, k8s, rf)
	}
	fixtures.Create(t, ctx, k8s, cq, q)
	fixtures.WaitActive(t, ctx, k8s, cq.Name, 30*time.Second)
	fixtures.Create(t, ctx, k8s, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(jobGPUs), Annotations: fixtures.RunFor(jobRuns)}))
	// Trainer's webhook reads runtimes from its cache: a dry run that
	// passes means the first real create will not be refused for it.
	eventually(t, 30*time.Second, "a dry-run TrainJob admitted by the shipped webhooks", func() error {
		_, err := dryRun(ns, q.Name)
		return err
	})
	return ns, q.Name
}

var (
	nodesOnce sync.Once
	nodesErr  error
)

// dryRun creates a queued TrainJob with dryRun=All: the API server calls
// both shipped webhooks and stores nothing. The mutating webhook suspends
// a queued job; a job coming back unsuspended was not seen by it.
func dryRun(ns, lq string) (*trainer.TrainJob, error) {
	tj := fixtures.TrainJob(ns, "", "torch", lq)
	tj.GenerateName = "probe-"
	if err := k8s.Create(ctx, tj, client.DryRunAll); err != nil {
		return nil, err
	}
	if !ptr.Deref(tj.Spec.Suspend, false) {
		return nil, fmt.Errorf("dry-run TrainJob came back unsuspended: the mutating webhook did not run")
	}
	return tj, nil
}

// webhookProbe keeps calling the shipped webhooks (a dry-run create every
// interval) and records every call that fails.
type webhookProbe struct {
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	calls    int
	failures []probeFailure
}

type probeFailure struct {
	at  time.Time
	err string
}

func startWebhookProbe(ns, lq string) *webhookProbe {
	w := &webhookProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			_, err := dryRun(ns, lq)
			w.mu.Lock()
			w.calls++
			if err != nil {
				w.failures = append(w.failures, probeFailure{at: time.Now(), err: err.Error()})
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// Stop ends the probe and fails t for every failed call.
func (w *webhookProbe) Stop(t *testing.T) {
	t.Helper()
	w.StopAllowing(t, time.Time{}, time.Time{})
}

// StopAllowing ends the probe and fails t for every failed call outside
// [from, to]; those inside are counted and logged.
func (w *webhookProbe) StopAllowing(t *testing.T, from, to time.Time) {
	t.Helper()
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	var allowed, failed []string
	for _, f := range w.failures {
		line := f.at.Format("15:04:05.000") + " " + f.err
		if !f.at.Before(from) && !f.at.After(to) {
			allowed = append(allowed, line)
			continue
		}
		failed = append(failed, line)
	}
	t.Logf("webhook probe: %d calls, %d failed (%d of them in the window allowed)", w.calls, len(w.failures), len(allowed))
	if w.calls < 10 {
		t.Errorf("the webhook probe made only %d calls", w.calls)
	}
	if len(failed) > 0 {
		t.Errorf("%d of %d webhook calls failed:\n%s", len(failed), w.calls, strings.Join(failed, "\n"))
	}
}

// submit creates n queued jobs; every create goes through both webhooks
// and must succeed at the first try.
func submit(t *testing.T, ns, lq, prefix string, n int) []*trainer.TrainJob {
	t.Helper()
	var jobs []*trainer.TrainJob
	for i := range n {
		tj := fixtures.TrainJob(ns, fmt.Sprintf("%s-%d", prefix, i), "torch", lq)
		if err := k8s.Create(ctx, tj); err != nil {
			t.Fatalf("creating %s: %v", tj.Name, err)
		}
		jobs = append(jobs, tj)
	}
	return jobs
}

// running counts jobs whose Workload is admitted and jobs that completed.
func progress(t *testing.T, ns string) (admitted, complete int) {
	t.Helper()
	var wls kueue.WorkloadList
	if err := k8s.List(ctx, &wls, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, wl := range wls.Items {
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			admitted++
		}
	}
	var tjs trainer.TrainJobList
	if err := k8s.List(ctx, &tjs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, tj := range tjs.Items {
		if apimeta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobComplete) {
			complete++
		}
	}
	return admitted, complete
}

// allCompleteOnce waits until every job completed, and checks none
// failed and each had exactly one Workload (no replica made a second one
// during a failover or restart).
func allCompleteOnce(t *testing.T, ns string, jobs []*trainer.TrainJob, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "every job complete", func() error {
		var pending []string
		for _, tj := range jobs {
			got := &trainer.TrainJob{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
				return err
			}
			if apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobFailed) {
				t.Fatalf("%s failed: %v", tj.Name, got.Status.Conditions)
			}
			if !apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobComplete) {
				pending = append(pending, tj.Name)
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("%d of %d not complete: %v", len(pending), len(jobs), pending)
		}
		return nil
	})
	var wls kueue.WorkloadList
	if err := k8s.List(ctx, &wls, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	perJob := map[string][]string{}
	for _, wl := range wls.Items {
		for _, ref := range wl.OwnerReferences {
			if ref.Kind == trainer.TrainJobKind {
				perJob[ref.Name] = append(perJob[ref.Name], wl.Name)
			}
		}
	}
	for _, tj := range jobs {
		if got := perJob[tj.Name]; len(got) != 1 {
			t.Errorf("%s has %d Workloads, want 1: %v", tj.Name, len(got), got)
		}
	}
	if len(wls.Items) != len(jobs) {
		t.Errorf("%d Workloads for %d jobs", len(wls.Items), len(jobs))
	}
}
