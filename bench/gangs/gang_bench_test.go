// Package gangbench measures how long a gang takes to be placed once Kueue
// admitted it, in each gang mode on the local cluster that serves it:
// coscheduling (scheduler-plugins, Kubernetes v1.34.4) and workload-api
// (the Workload API's PodGroups, v1.37.2). A benchmark, not a test: make
// bench-gang, docs/benchmark.md "Gang placement".
package gangs_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

const (
	nodes       = 8
	gpusPerNode = 8
	// every is how often the bench looks: the resolution of its figures.
	every = 20 * time.Millisecond
)

var toleration = corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule}

// BenchmarkAdmittedToAllPodsBound: one TrainJob of 8 trainer pods × 8 GPUs
// at a time, on 8 nodes of 8 GPUs, gang scheduled by its ClusterQueue's
// mode: from the moment the bench sees its Workload admitted to the moment
// it sees all 8 pods bound (ms-admitted-to-bound, the median of b.N jobs;
// p90 and max beside it), and that time in two (medians): until the
// API server answered the job's last pod create (our start, the Job
// controller, our pod webhook) and from then on (the scheduler), from
// the audit log. Run it with -benchtime=Nx.
func BenchmarkAdmittedToAllPodsBound(b *testing.B) {
	for _, mode := range modes {
		// One cluster per mode, whatever b.N the benchmark is run with
		// (Go runs it with b.N = 1 first).
		var k8s client.Client
		var cluster *localcluster.Cluster
		down := func() {}
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			if k8s == nil {
				k8s, cluster, down = clusterFor(b, ctx, mode)
			}
			ns := setUp(b, ctx, k8s, mode.name, nodes, gpusPerNode)
			fixtures.Create(b, ctx, k8s, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(nodes),
				fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(gpusPerNode), Tolerations: []corev1.Toleration{toleration}, Annotations: fixtures.RunFor(time.Hour)}))
			var placed []placement
			b.ResetTimer()
			for i := range b.N {
				placed = append(placed, placeOne(b, ctx, k8s, ns, fmt.Sprintf("job-%d", i), nodes))
			}
			b.StopTimer()
			creates, err := podCreates(cluster.AuditLog(), ns)
			if err != nil {
				b.Fatal(err)
			}
			took, ours, scheduler := phases(placed, creates)
			b.ReportMetric(ms(quantile(took, 0.5)), "ms-admitted-to-bound")
			b.ReportMetric(ms(quantile(took, 0.9)), "ms-p90")
			b.ReportMetric(ms(quantile(took, 1)), "ms-max")
			b.ReportMetric(ms(quantile(ours, 0.5)), "ms-admitted-to-pods-created")
			b.ReportMetric(ms(quantile(scheduler, 0.5)), "ms-pods-created-to-bound")
		})
		down()
	}
}

// modes are the gang modes, each with the Kubernetes release whose local
// cluster serves it.
var modes = []struct{ name, kubernetes string }{
	{gang.Coscheduling, localcluster.KubernetesCoscheduling},
	{gang.WorkloadAPI, localcluster.KubernetesWorkloadAPI},
}

// clusterFor brings up a local cluster serving mode, and returns its
// client, the cluster and what takes it down.
func clusterFor(b *testing.B, ctx context.Context, mode struct{ name, kubernetes string }) (client.Client, *localcluster.Cluster, func()) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	o := localcluster.Options{Root: root}
	o.KubernetesVersion = mode.kubernetes
	c, stop, err := localcluster.UpForTests(ctx, localcluster.ForTests("bench-gang-"+mode.name, o))
	if err != nil {
		b.Fatal(err)
	}
	k8s, err := c.UnthrottledClient(fixtures.Scheme())
	if err != nil {
		stop()
		b.Fatal(err)
	}
	return k8s, c, stop
}

// quantile q of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Milliseconds()) }

// setUp makes a namespace, count nodes of gpus GPUs, and a ClusterQueue
// gang scheduling in mode with its LocalQueue "lq".
func setUp(b *testing.B, ctx context.Context, k8s client.Client, mode string, count, gpus int) string {
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gang-"}}
	fixtures.Create(b, ctx, k8s, nsObj)
	ns := nsObj.Name
	// CPU quota as the nodes have (64 each): a pod of GPUs asks for one.
	p := fixtures.Pool{Name: "gpu", Labels: map[string]string{"bench.trainjob-kueue.dev/pool": ns}, GPUs: int64(count * gpus), CPUs: strconv.Itoa(count * 64)}
	tainted := p
	tainted.Taints = []corev1.Toleration{toleration}
	// Eight at a time: a node's add waits for kwok's first status.
	var added errgroup.Group
	added.SetLimit(8)
	for i := range count {
		added.Go(func() error {
			return localcluster.AddNode(ctx, k8s, fixtures.Node(fmt.Sprintf("%s-%d", ns, i), tainted, int64(gpus)))
		})
	}
	if err := added.Wait(); err != nil {
		b.Fatal(err)
	}
	flavors, cq, lq := fixtures.Queue(ns, ns, p)
	cq.Annotations = map[string]string{names.GangSchedulingAnnotation: mode}
	lq.Name = "lq"
	for _, rf := range flavors {
		fixtures.Create(b, ctx, k8s, rf)
	}
	fixtures.Create(b, ctx, k8s, cq, lq)
	fixtures.WaitActive(b, ctx, k8s, cq.Name, 30*time.Second)
	return ns
}

// placement is when the bench made one job, saw it admitted, and saw all
// its pods bound.
type placement struct{ submitted, admitted, bound time.Time }

// placeOne runs one job of want pods until all are bound, and deletes it
// once they are gone again.
func placeOne(b *testing.B, ctx context.Context, k8s client.Client, ns, name string, want int) placement {
	tj := fixtures.TrainJob(ns, name, "torch", "lq")
	submitted := time.Now()
	fixtures.Create(b, ctx, k8s, tj)
	admitted := waitFor(b, 2*time.Minute, func() (bool, error) {
		wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
		return err == nil && wl != nil && apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted), nil
	})
	// A large gang is looked at less often: each look lists its pods.
	look, within := every, 2*time.Minute
	if want > 100 {
		look, within = 500*time.Millisecond, 10*time.Minute
	}
	bound := waitForEvery(b, look, within, func() (bool, error) {
		pods, err := fixtures.PodsOf(ctx, k8s, tj, "node")
		if err != nil {
			return false, err
		}
		n := 0
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				n++
			}
		}
		return n == want, nil
	})
	if err := k8s.Delete(ctx, &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		b.Fatal(err)
	}
	waitForEvery(b, look, within, func() (bool, error) {
		var pods corev1.PodList
		err := k8s.List(ctx, &pods, client.InNamespace(ns))
		return err == nil && len(pods.Items) == 0, err
	})
	return placement{submitted: submitted, admitted: admitted, bound: bound}
}

// waitFor polls done every 20 ms and returns when it first said true.
func waitFor(b *testing.B, timeout time.Duration, done func() (bool, error)) time.Time {
	b.Helper()
	return waitForEvery(b, every, timeout, done)
}

// waitForEvery polls done every look and returns when it first said true.
func waitForEvery(b *testing.B, look, timeout time.Duration, done func() (bool, error)) time.Time {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := done()
		if ok {
			return time.Now()
		}
		if time.Now().After(deadline) {
			b.Fatalf("not done within %s (last error: %v)", timeout, err)
		}
		time.Sleep(look)
	}
}
