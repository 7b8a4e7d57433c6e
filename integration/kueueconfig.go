package integration

import (
	"fmt"
	"os"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/util/waitforpodsready"
	"sigs.k8s.io/yaml"
)

// Names in Kueue's Configuration.
const (
	// InTreeFramework is Kueue's built-in TrainJob integration.
	InTreeFramework           = "trainer.kubeflow.org/trainjob"
	jobSetFramework           = "jobset.x-k8s.io/jobset"
	trainJobExternalFramework = "TrainJob.v1alpha1.trainer.kubeflow.org"
)

// FromKueueConfig takes the settings that must agree with the deployed Kueue
// from its own Configuration. A Kueue that still runs its built-in TrainJob
// integration would create a second Workload for every TrainJob: refuse.
func FromKueueConfig(cfg *configapi.Configuration, opts *Options) error {
	if cfg.Integrations != nil && slices.Contains(cfg.Integrations.Frameworks, InTreeFramework) {
		return fmt.Errorf("the Kueue configuration enables the built-in %q integration in integrations.frameworks: every TrainJob would get two Workloads. Remove it from the Kueue configuration (and restart Kueue) before running trainjob-kueue", InTreeFramework)
	}
	if cfg.ManageJobsWithoutQueueName && cfg.Integrations != nil && slices.Contains(cfg.Integrations.Frameworks, jobSetFramework) {
		return fmt.Errorf("the Kueue configuration sets manageJobsWithoutQueueName: true with the %q integration on: Kueue would queue every JobSet Trainer creates for an admitted TrainJob a second time. Set manageJobsWithoutQueueName: false (label the jobs to queue), or turn Kueue's JobSet integration off", jobSetFramework)
	}
	if cfg.Integrations != nil && slices.Contains(cfg.Integrations.ExternalFrameworks, trainJobExternalFramework) {
		return fmt.Errorf("the Kueue configuration lists %q in integrations.externalFrameworks: Kueue's Job and JobSet reconcilers would then look for the TrainJob's Workloads through an index Kueue does not have and fail in a loop. Remove it; trainjob-kueue needs no entry there", trainJobExternalFramework)
	}
	opts.ManageJobsWithoutQueueName = cfg.ManageJobsWithoutQueueName
	if cfg.ManagedJobsNamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(cfg.ManagedJobsNamespaceSelector)
		if err != nil {
			return fmt.Errorf("managedJobsNamespaceSelector: %w", err)
		}
		opts.ManagedJobsNamespaceSelector = sel
	} else {
		opts.ManagedJobsNamespaceSelector = labels.Everything()
	}
	opts.WaitForPodsReady = waitforpodsready.Enabled(cfg.WaitForPodsReady)
	if w := cfg.WaitForPodsReady; w != nil {
		opts.PodsReadyTimeouts.Timeout = w.Timeout.Duration
		if w.RecoveryTimeout != nil {
			opts.PodsReadyTimeouts.Recovery = &w.RecoveryTimeout.Duration
		}
	}
	if cfg.Integrations != nil {
		opts.LabelKeysToCopy = cfg.Integrations.LabelKeysToCopy
	}
	// The feature gates are the caller's to check: they are Kueue's,
	// process-wide.
	opts.MultiKueue = cfg.MultiKueue != nil && slices.ContainsFunc(cfg.MultiKueue.ExternalFrameworks, func(f configapi.MultiKueueExternalFramework) bool {
		return f.Name == trainJobExternalFramework
	})
	return nil
}

// LoadKueueConfig reads a Kueue Configuration file with Kueue's defaults; an
// empty path gives the defaults alone. Kueue's own validation is not run: it
// checks the frameworks list against the integrations compiled into the
// process, and ours holds none of Kueue's.
func LoadKueueConfig(path string) (configapi.Configuration, error) {
	return LoadKueueConfigFor(path, KueueRelease{PodsReadyByDefault: true})
}

// LoadKueueConfigFor reads a Kueue Configuration file with the defaults the
// given Kueue release applies: before v0.19, no waitForPodsReady unless the
// file has the section.
func LoadKueueConfigFor(path string, release KueueRelease) (configapi.Configuration, error) {
	scheme := runtime.NewScheme()
	if err := configapi.AddToScheme(scheme); err != nil {
		return configapi.Configuration{}, err
	}
	cfg := configapi.Configuration{}
	hasWaitForPodsReady := false
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("reading the Kueue configuration: %w", err)
		}
		if err := runtime.DecodeInto(serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDecoder(), data, &cfg); err != nil {
			return cfg, fmt.Errorf("decoding the Kueue configuration %s: %w", path, err)
		}
		// Decoding applies the linked release's defaults; whether the
		// file itself has the section only the raw document tells.
		var raw map[string]any
		if err := yaml.Unmarshal(data, &raw); err != nil {
			return cfg, fmt.Errorf("decoding the Kueue configuration %s: %w", path, err)
		}
		_, hasWaitForPodsReady = raw["waitForPodsReady"]
	}
	scheme.Default(&cfg)
	if !release.PodsReadyByDefault && !hasWaitForPodsReady {
		cfg.WaitForPodsReady = nil
	}
	return cfg, nil
}

// GateLocalQueueDefaulting is the gate of Kueue's default LocalQueue, GA and
// removed in Kueue v0.17.
const GateLocalQueueDefaulting = "LocalQueueDefaulting"

// retiredGate: a feature gate Kueue v0.16 had and the linked Kueue no
// longer knows (graduated or dropped). A configuration written for Kueue
// v0.16 may still set it; setting it on the linked gates would fail.
func retiredGate(name string) bool {
	switch name {
	case "DynamicResourceAllocation", "LendingLimit", GateLocalQueueDefaulting,
		"MultiKueueBatchJobWithManagedBy", "SanitizePodSets", "TASProfileLeastFreeCapacity":
		return true
	}
	return false
}

// SplitFeatureGates separates the gates of a Kueue configuration that the
// linked Kueue knows from retired ones, whose values the caller honours
// itself where they matter.
func SplitFeatureGates(all map[string]bool) (known, retired map[string]bool) {
	known = make(map[string]bool, len(all))
	retired = map[string]bool{}
	for name, on := range all {
		if retiredGate(name) {
			retired[name] = on
			continue
		}
		known[name] = on
	}
	return known, retired
}
