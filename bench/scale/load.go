package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
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
	// The mix a busy cluster has (loadharness.Runtimes): torch with a
	// dataset and a model initializer, MPI, plain torch. Admitted pods run
	// for the whole run, so an admitted job keeps its quota and every wave
	// admits new jobs only.
	for _, rt := range loadharness.Runtimes(ns, loadharness.RunFor(24*time.Hour), "dataset-initializer", "model-initializer") {
		if err := c.Create(ctx, rt); err != nil {
			return err
		}
	}
	return loadharness.WaitActive(ctx, c, 1)
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
