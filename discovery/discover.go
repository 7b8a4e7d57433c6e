package discovery

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/features"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// Facts are what the manager learns once, at start, from the installed
// CRDs and the deployed Kueue's Configuration. They hold until it stops:
// WatchShape stops it when Trainer's CRD changes shape under it, and the
// Deployment restarts it to learn them again.
type Facts struct {
	// Shape is the installed Trainer's TrainJob API shape.
	Shape shape.Shape
	// Defaulter applies the installed Workload CRD's defaults to the
	// PodSets we compute, as the API server would.
	Defaulter podsets.Defaulter
	// Kueue is the installed Kueue release, told by its Workload CRD.
	Kueue KueueRelease
	// Settings are the deployed Kueue's that ours must agree with, read
	// from its Configuration with that release's defaults.
	Settings KueueSettings
	// Topology reads topology requests when Kueue's topology-aware
	// scheduling is on; nil when it is off.
	Topology podsets.Topology
	// PodGroups: scheduler-plugins' PodGroup CRD is installed.
	PodGroups bool
	// WorkloadAPI: the API server serves the Workload API's PodGroups
	// (scheduling.k8s.io/v1beta1; ServesWorkloadAPI).
	WorkloadAPI bool
	// Config is the deployed Kueue's Configuration, read once, with the
	// installed release's defaults (its client budget and controller
	// concurrency are the manager's too).
	Config configapi.Configuration
}

// Discover learns the Facts from the cluster c reads and Kueue's
// Configuration file kueueConfig ("" for Kueue's defaults), read once, and
// sets Kueue's feature gates as the file sets them, with featureGates
// ("A=true,B=false") over them (ApplyFeatureGates). It refuses, saying
// why, a cluster or configuration it can't serve.
func Discover(ctx context.Context, c client.Reader, kueueConfig, featureGates string) (Facts, error) {
	var f Facts
	var err error
	if f.Shape, err = trainerShape(ctx, c); err != nil {
		return f, err
	}
	wl, err := workloadCRDOf(ctx, c)
	if err != nil {
		return f, err
	}
	if f.Kueue, err = KueueReleaseOf(wl); err != nil {
		return f, err
	}
	if f.Defaulter, err = workloadDefaulter(wl); err != nil {
		return f, err
	}
	// The file is read with the installed release's defaults: an older
	// Kueue waits for pods only when configured to.
	if f.Config, err = LoadKueueConfigFor(kueueConfig, f.Kueue); err != nil {
		return f, err
	}
	if err := ApplyFeatureGates(&f.Config, featureGates); err != nil {
		return f, err
	}
	if f.Settings, err = SettingsOf(&f.Config); err != nil {
		return f, err
	}
	if features.Enabled(features.TopologyAwareScheduling) {
		f.Topology = KueueTopology()
	}
	if f.PodGroups, err = hasPodGroups(ctx, c); err != nil {
		return f, err
	}
	return f, nil
}

// ProjectionOf is what a read-only command needs to compute a job's
// PodSets as the manager does: the installed Trainer's shape, and the
// installed Workload CRD's defaults and PodSet limit.
func ProjectionOf(ctx context.Context, c client.Reader) (shape.Shape, podsets.Options, error) {
	s, err := trainerShape(ctx, c)
	if err != nil {
		return nil, podsets.Options{}, err
	}
	wl, err := workloadCRDOf(ctx, c)
	if err != nil {
		return nil, podsets.Options{}, err
	}
	release, err := KueueReleaseOf(wl)
	if err != nil {
		return nil, podsets.Options{}, err
	}
	d, err := workloadDefaulter(wl)
	if err != nil {
		return nil, podsets.Options{}, err
	}
	return s, podsets.Options{Defaulter: d, MaxPodSets: release.MaxPodSets}, nil
}
