package integration

import (
	"context"
	"fmt"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/metrics"
)

// The seam to Kueue's job framework: how its reconciler is made and the
// index it reads through. Kueue v0.20 (kueue#13547) turns the package-level
// setup of jobframework (RegisterIntegration, SetupControllers,
// SetupIndexes and their friends) into IntegrationManager methods, drops
// podSets from GetCustomAnnotations (we implement none) and adds an
// EventRecorder to ExtractPriority and PrepareWorkloadPriority (we call
// neither): moving to v0.20 is a change to this file. The GenericJob
// interfaces our adapter implements are asserted in generic_job.go, so a
// changed method signature fails the build there.

// newFrameworkReconciler is the job framework's reconciler, configured as
// the deployed Kueue is (opts), writing through frameworkClient.
func newFrameworkReconciler(c client.Client, recorder events.EventRecorder, opts Options) *jobframework.JobReconciler {
	fwOpts := []jobframework.Option{
		jobframework.WithManageJobsWithoutQueueName(opts.ManageJobsWithoutQueueName),
		jobframework.WithManagedJobsNamespaceSelector(opts.ManagedJobsNamespaceSelector),
		jobframework.WithLabelKeysToCopy(sets.New(opts.LabelKeysToCopy...)),
		jobframework.WithCache(frameworkCache(c)),
	}
	if opts.WaitForPodsReady {
		fwOpts = append(fwOpts, func(o *jobframework.Options) { o.WaitForPodsReady = true })
	}
	return jobframework.NewReconciler(frameworkClient{c}, recorder, fwOpts...)
}

// frameworkCache is the Kueue scheduler cache the job framework asks, when a
// Workload becomes PodsReady, whether to report LocalQueue metrics (a nil
// one panics there). Ours holds no queues, and Kueue's own process reports
// those metrics: the answer is no. Left at its default (on with Kueue
// v0.19's LocalQueueMetrics gate) it looked the queue up and logged "Failed
// to get LocalQueue for metrics" at error level for every job started.
func frameworkCache(c client.Client) *schdcache.Cache {
	return schdcache.New(c, schdcache.WithLocalQueueMetrics(&metrics.LocalQueueMetricsConfig{Enabled: false}))
}

// setupFrameworkIndexes registers the index the job framework reads
// Workloads through: by owning TrainJob.
func setupFrameworkIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := jobframework.SetupWorkloadOwnerIndex(ctx, indexer, trainjob.GVK); err != nil {
		return fmt.Errorf("indexing Workloads by TrainJob: %w", err)
	}
	return nil
}
