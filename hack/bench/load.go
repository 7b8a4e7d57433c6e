package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

const (
	ns      = "bench"
	queues  = 4
	nodes   = 16
	gpusPer = 8
)

var pool = fixtures.Pool{Name: "gpu", Labels: map[string]string{"bench.trainjob-kueue.dev/pool": "gpu"}, GPUs: nodes * gpusPer / queues}

// runtimes of the load: torch with a dataset initializer, MPI, plain torch.
// Pods run for runFor, then kwok completes them.
func runtimes(runFor time.Duration) []*trainer.TrainingRuntime {
	run := map[string]string{
		"pod-complete.stage.kwok.x-k8s.io/delay":        runFor.String(),
		"pod-complete.stage.kwok.x-k8s.io/jitter-delay": (runFor + time.Second).String(),
	}
	cpu := fixtures.CPUs("1")
	gpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), fixtures.GPU: resource.MustParse("1")}
	return []*trainer.TrainingRuntime{
		fixtures.TrainingRuntime(ns, "torch-init", fixtures.TorchPolicy(2),
			fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: cpu, Annotations: run},
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: gpu, Annotations: run, DependsOn: []string{"dataset-initializer"}}),
		fixtures.TrainingRuntime(ns, "mpi", fixtures.MPIPolicy(2, false),
			fixtures.Role{Name: "launcher", Ancestor: "trainer", Requests: cpu, Annotations: run},
			fixtures.Role{Name: "node", Requests: gpu, Annotations: run}),
		fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: gpu, Annotations: run}),
	}
}

// jobName and its runtime and queue: the mix is deterministic.
func jobName(i int) string { return fmt.Sprintf("job-%05d", i) }

func runtimeOf(i int) string { return []string{"torch-init", "mpi", "torch"}[i%3] }

func queueOf(i int) string { return fmt.Sprintf("lq-%d", i%queues) }

// nodePods is how many pods of role "node" each runtime runs, as
// trainjob-kueue computes it.
func nodePods(runFor time.Duration) (map[string]int, error) {
	out := map[string]int{}
	for _, rt := range runtimes(runFor) {
		job := fixtures.Ours(fixtures.TrainJob(ns, "x", rt.Name, "lq-0"))
		roles, err := podsets.Roles(job, &rt.Spec, shape.PodTemplateOverrides{})
		if err != nil {
			return nil, err
		}
		for _, r := range roles {
			if r.Name == "node" {
				out[rt.Name] = int(r.Count())
			}
		}
	}
	return out, nil
}

// holdCheck is the admission check of a harness-scale run (-hold): no
// controller ever sets it Ready, so each Workload keeps its quota
// reservation and is never admitted, and no pod runs, as in Kueue's
// scheduler performance harness.
const holdCheck = "bench-hold"

// holdQuota is each ClusterQueue's GPU quota in a harness-scale run: more
// than any N reserves.
const holdQuota = 1 << 30

// holding makes cq hold every Workload it reserves quota for: the hold
// check on each, quota for any N.
func holding(cq *kueue.ClusterQueue) {
	cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: holdCheck}}}
	for i := range cq.Spec.ResourceGroups[0].Flavors[0].Resources {
		if r := &cq.Spec.ResourceGroups[0].Flavors[0].Resources[i]; r.Name != corev1.ResourceMemory {
			r.NominalQuota = *resource.NewQuantity(holdQuota, resource.DecimalSI)
		}
	}
}

// setUpHoldCheck creates the hold check, active (the ClusterQueues using
// it are inactive until it is) and never Ready for any Workload.
func setUpHoldCheck(ctx context.Context, c client.Client) error {
	ac := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: holdCheck}, Spec: kueue.AdmissionCheckSpec{ControllerName: "bench.trainjob-kueue.dev/never-ready"}}
	if err := c.Create(ctx, ac); err != nil {
		return err
	}
	// Kueue writes the check's status too: set ours on the latest.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ac), ac); err != nil {
			return err
		}
		apimeta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{Type: kueue.AdmissionCheckActive, Status: metav1.ConditionTrue, Reason: "Active", Message: "the bench's hold: never Ready"})
		return c.Status().Update(ctx, ac)
	})
}

// setUp creates the namespace, the nodes, a cohort of ClusterQueues with a
// LocalQueue each, and the runtimes; hold: the ClusterQueues hold every
// Workload after its quota reservation (holding).
func setUp(ctx context.Context, c client.Client, runFor time.Duration, hold bool) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	for i := range nodes {
		if err := localcluster.AddNode(ctx, c, fixtures.Node(fmt.Sprintf("bench-%02d", i), pool, gpusPer)); err != nil {
			return err
		}
	}
	if hold {
		if err := setUpHoldCheck(ctx, c); err != nil {
			return err
		}
	}
	for q := range queues {
		flavors, cq, lq := fixtures.Queue(ns, fmt.Sprintf("bench-%d", q), pool)
		if hold {
			holding(cq)
		}
		cq.Spec.CohortName = "bench"
		lq.Name = fmt.Sprintf("lq-%d", q)
		if q == 0 {
			// One flavor for all: the queues share it through the cohort.
			flavors[0].Name = "bench-gpu"
			if err := c.Create(ctx, flavors[0]); err != nil {
				return err
			}
		}
		cq.Spec.ResourceGroups[0].Flavors[0].Name = "bench-gpu"
		if err := c.Create(ctx, cq); err != nil {
			return err
		}
		if err := c.Create(ctx, lq); err != nil {
			return err
		}
	}
	for _, rt := range runtimes(runFor) {
		if err := c.Create(ctx, rt); err != nil {
			return err
		}
	}
	return waitActive(ctx, c)
}

func waitActive(ctx context.Context, c client.Client) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var cqs kueue.ClusterQueueList
		if err := c.List(ctx, &cqs); err != nil {
			return err
		}
		active := 0
		for _, cq := range cqs.Items {
			for _, cond := range cq.Status.Conditions {
				if cond.Type == kueue.ClusterQueueActive && cond.Status == metav1.ConditionTrue {
					active++
				}
			}
		}
		if active == queues {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("ClusterQueues not active")
}

// object is what the load creates for job i: a TrainJob, or for the floor
// a bare Workload of the same shape.
type maker func(i int) (client.Object, error)

func trainJobs(i int) (client.Object, error) {
	return fixtures.TrainJob(ns, jobName(i), runtimeOf(i), queueOf(i)), nil
}

// floorWorkloads are bare Workloads whose PodSets are what trainjob-kueue
// computes for the same TrainJob: Kueue's queueing path, without any job
// integration.
func floorWorkloads(runFor time.Duration) maker {
	rts := map[string]*trainer.TrainingRuntime{}
	for _, rt := range runtimes(runFor) {
		rts[rt.Name] = rt
	}
	return func(i int) (client.Object, error) {
		job := fixtures.Ours(fixtures.TrainJob(ns, jobName(i), runtimeOf(i), queueOf(i)))
		roles, err := podsets.Roles(job, &rts[runtimeOf(i)].Spec, shape.PodTemplateOverrides{})
		if err != nil {
			return nil, err
		}
		ps, err := podsets.FromRoles(roles, podsets.Options{})
		if err != nil {
			return nil, err
		}
		return &kueue.Workload{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: jobName(i)},
			Spec:       kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(queueOf(i)), PodSets: ps},
		}, nil
	}
}

// submit creates n objects: the first burst of them at once (concurrency
// workers), the rest as a steady stream of rate per second. It records
// each object's creation time.
func submit(ctx context.Context, c client.Client, n, burst int, rate float64, mk maker, rec *recorder) error {
	errs := make(chan error, n)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				obj, err := mk(i)
				if err != nil {
					errs <- err
					continue
				}
				rec.created(obj.GetName(), time.Now())
				if err := createRetrying(ctx, c, obj); err != nil {
					errs <- fmt.Errorf("creating %s: %w", obj.GetName(), err)
				}
			}
		}()
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	// Interrupted, the rest is not submitted: the set-up's cluster is torn
	// down as soon as the jobs being created are.
submitting:
	for i := range n {
		if i >= burst {
			select {
			case <-ctx.Done():
				break submitting
			case <-tick.C:
			}
		}
		select {
		case <-ctx.Done():
			break submitting
		case work <- i:
		}
	}
	tick.Stop()
	close(work)
	wg.Wait()
	close(errs)
	if err := ctx.Err(); err != nil {
		return err
	}
	for err := range errs {
		return err
	}
	return nil
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
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	return err
}
