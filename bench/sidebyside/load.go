package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
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

// runtimes of the load (loadharness.Runtimes): torch with a dataset
// initializer, MPI, plain torch. Pods run for runFor, then kwok completes
// them.
func runtimes(runFor time.Duration) []*trainer.TrainingRuntime {
	return loadharness.Runtimes(ns, loadharness.RunFor(runFor), "dataset-initializer")
}

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
	return loadharness.WaitActive(ctx, c, queues)
}

// object is what the load creates for job i: a TrainJob, or for the floor
// a bare Workload of the same shape.
type maker func(i int) (client.Object, error)

func trainJobs(i int) (client.Object, error) {
	return fixtures.TrainJob(ns, loadharness.JobName(i), loadharness.RuntimeOf(i), queueOf(i)), nil
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
		job := fixtures.Ours(fixtures.TrainJob(ns, loadharness.JobName(i), loadharness.RuntimeOf(i), queueOf(i)))
		roles, err := podsets.Roles(job, &rts[loadharness.RuntimeOf(i)].Spec, shape.PodTemplateOverrides{})
		if err != nil {
			return nil, err
		}
		ps, err := podsets.FromRoles(roles, podsets.Options{})
		if err != nil {
			return nil, err
		}
		return &kueue.Workload{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: loadharness.JobName(i)},
			Spec:       kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(queueOf(i)), PodSets: ps},
		}, nil
	}
}

// submit creates n objects: the first burst of them at once, the rest as
// an open-loop stream of rate per second (loadharness.Stream), recording
// each object's creation time.
func submit(ctx context.Context, c client.Client, n, burst int, rate float64, mk maker, rec *recorder) error {
	return loadharness.Stream(ctx, c, loadharness.StreamOptions{N: n, Burst: burst, Rate: rate}, mk, rec.created)
}
