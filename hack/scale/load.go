package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

const (
	ns      = "scale"
	cqName  = "scale"
	flavor  = "scale-gpu"
	gpusPer = 8
)

var pool = fixtures.Pool{Name: "gpu", Labels: map[string]string{"scale.trainjob-kueue.dev/pool": "gpu"}, CPUs: "100000"}

// runtimes of the load, the mix a busy cluster has: torch with a dataset
// initializer, MPI, plain torch. Admitted pods run for the whole run, so
// an admitted job keeps its quota and every wave admits new jobs only.
func runtimes() []*trainer.TrainingRuntime {
	// kwok completes a pod between delay and jitter-delay (default 5 s).
	run := map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": "24h", "pod-complete.stage.kwok.x-k8s.io/jitter-delay": "25h"}
	cpu := fixtures.CPUs("1")
	gpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), fixtures.GPU: resource.MustParse("1")}
	return []*trainer.TrainingRuntime{
		fixtures.TrainingRuntime(ns, "torch-init", fixtures.TorchPolicy(2),
			fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: cpu, Annotations: run},
			fixtures.Role{Name: "model-initializer", Ancestor: "model-initializer", Requests: cpu, Annotations: run},
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: gpu, Annotations: run, DependsOn: []string{"dataset-initializer", "model-initializer"}}),
		fixtures.TrainingRuntime(ns, "mpi", fixtures.MPIPolicy(2, false),
			fixtures.Role{Name: "launcher", Ancestor: "trainer", Requests: cpu, Annotations: run},
			fixtures.Role{Name: "node", Requests: gpu, Annotations: run}),
		fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: gpu, Annotations: run}),
	}
}

func jobName(i int) string { return fmt.Sprintf("job-%05d", i) }

func runtimeOf(i int) string { return []string{"torch-init", "mpi", "torch"}[i%3] }

// gpusOf job i: what Kueue books for it (torch-init and mpi run two GPU
// nodes, torch one).
func gpusOf(i int) int64 { return []int64{2, 2, 1}[i%3] }

// setUp creates the namespace, nodes for the jobs the waves admit, one
// ClusterQueue without GPU quota (every job queues) and its LocalQueue, and
// the runtimes.
func setUp(ctx context.Context, c client.Client, admitGPUs int64) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	for i := range admitGPUs/gpusPer + 1 {
		if err := localcluster.AddNode(ctx, c, fixtures.Node(fmt.Sprintf("scale-%03d", i), pool, gpusPer)); err != nil {
			return err
		}
	}
	flavors, cq, lq := fixtures.Queue(ns, cqName, pool)
	flavors[0].Name = flavor
	cq.Spec.ResourceGroups[0].Flavors[0].Name = flavor
	if err := c.Create(ctx, flavors[0]); err != nil {
		return err
	}
	if err := c.Create(ctx, cq); err != nil {
		return err
	}
	if err := c.Create(ctx, lq); err != nil {
		return err
	}
	for _, rt := range runtimes() {
		if err := c.Create(ctx, rt); err != nil {
			return err
		}
	}
	return waitActive(ctx, c)
}

func waitActive(ctx context.Context, c client.Client) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var cq kueue.ClusterQueue
		if err := c.Get(ctx, client.ObjectKey{Name: cqName}, &cq); err != nil {
			return err
		}
		for _, cond := range cq.Status.Conditions {
			if cond.Type == kueue.ClusterQueueActive && cond.Status == metav1.ConditionTrue {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("ClusterQueue %s not active", cqName)
}

// setGPUQuota sets the ClusterQueue's GPU quota: a wave of admissions.
func setGPUQuota(ctx context.Context, c client.Client, gpus int64) error {
	for attempt := 0; ; attempt++ {
		var cq kueue.ClusterQueue
		if err := c.Get(ctx, client.ObjectKey{Name: cqName}, &cq); err != nil {
			return err
		}
		res := cq.Spec.ResourceGroups[0].Flavors[0].Resources
		for i := range res {
			if res[i].Name == fixtures.GPU {
				res[i].NominalQuota = *resource.NewQuantity(gpus, resource.DecimalSI)
			}
		}
		err := c.Update(ctx, &cq)
		if err == nil || attempt == 10 {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// submit creates TrainJobs [0, n) with 8 workers, counting them in done.
func submit(ctx context.Context, c client.Client, n int, done *atomic.Int64) error {
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				tj := fixtures.TrainJob(ns, jobName(i), runtimeOf(i), "lq")
				if err := createRetrying(ctx, c, tj); err != nil {
					select {
					case errs <- fmt.Errorf("creating %s: %w", tj.Name, err):
					default:
					}
					continue
				}
				done.Add(1)
			}
		})
	}
	for i := range n {
		select {
		case work <- i:
		case err := <-errs:
			close(work)
			wg.Wait()
			return err
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

// createRetrying retries what a loaded control plane answers with a
// transient error (webhook timeouts, throttling).
func createRetrying(ctx context.Context, c client.Client, obj client.Object) error {
	var err error
	for attempt := range 10 {
		if err = c.Create(ctx, obj.DeepCopyObject().(client.Object)); err == nil {
			return nil
		}
		if strings.Contains(err.Error(), "already exists") {
			return nil
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return err
}

// editRuntime changes the spec of runtime name (a label on its first
// replicatedJob's pods): a new generation, which every job on it sees.
func editRuntime(ctx context.Context, c client.Client, name string) error {
	var rt trainer.TrainingRuntime
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rt); err != nil {
		return err
	}
	tmpl := &rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels["scale.trainjob-kueue.dev/edited"] = time.Now().Format("150405")
	return c.Update(ctx, &rt)
}
