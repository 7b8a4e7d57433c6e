package discovery

import (
	"fmt"
	"os"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/util/waitforpodsready"
	"sigs.k8s.io/yaml"

	"github.com/trainjob-kueue/trainjob-kueue/quota"
)

// Names in Kueue's Configuration.
const (
	// InTreeFramework is Kueue's built-in TrainJob integration.
	InTreeFramework = "trainer.kubeflow.org/trainjob"
	jobSetFramework = "jobset.x-k8s.io/jobset"
	jobFramework    = "batch/job"
	// TrainJobExternalFramework names TrainJob in Kueue's lists of
	// external frameworks (MultiKueue's: the generic adapter).
	TrainJobExternalFramework = "TrainJob.v1alpha1.trainer.kubeflow.org"
)

// KueueSettings are the deployed Kueue's settings that ours must agree
// with, from its Configuration.
type KueueSettings struct {
	ManageJobsWithoutQueueName   bool
	ManagedJobsNamespaceSelector labels.Selector
	WaitForPodsReady             bool
	// PodsReadyTimeouts are waitForPodsReady's, to warn about gangs that
	// Kueue would evict before the scheduler gives up on them.
	PodsReadyTimeouts quota.PodsReadyTimeouts
	LabelKeysToCopy   []string
	// LocalQueueDefaulting mirrors Kueue's feature gate: a job without a
	// queue name goes to the namespace's LocalQueue named "default".
	LocalQueueDefaulting bool
	// MultiKueue: Kueue here dispatches TrainJobs to worker clusters
	// (TrainJob in multiKueue.externalFrameworks, the MultiKueue gates on).
	// The webhook then hands jobs on queues with a MultiKueue admission
	// check to MultiKueue through spec.managedBy.
	MultiKueue bool
	// KueueNamespace is where Kueue runs, and MultiKueue's worker
	// kubeconfig Secrets live; MultiKueueOrigin the value of the
	// kueue.x-k8s.io/multikueue-origin label MultiKueue sets on what it
	// creates on workers. Both with Kueue's defaults.
	KueueNamespace   string
	MultiKueueOrigin string
	// PriorityBoost: Kueue honours kueue.x-k8s.io/priority-boost (its
	// PriorityBoost gate, alpha and off by default since v0.17), so a
	// ClusterQueue's preemption-cost policy has an effect.
	PriorityBoost bool
	// BuiltInTrainJob: Kueue runs its built-in TrainJob integration. We
	// then stand by (Standby) instead of creating a second Workload for
	// every TrainJob.
	BuiltInTrainJob bool
}

// JobSetIntegration tells whether the configuration turns Kueue's own
// JobSet integration on.
func JobSetIntegration(cfg *configapi.Configuration) bool {
	return cfg.Integrations != nil && slices.Contains(cfg.Integrations.Frameworks, jobSetFramework)
}

// BuiltInTrainJob tells whether the configuration turns Kueue's built-in
// TrainJob integration on.
func BuiltInTrainJob(cfg *configapi.Configuration) bool {
	return cfg.Integrations != nil && slices.Contains(cfg.Integrations.Frameworks, InTreeFramework)
}

// unlabelledChildrenQueued refuses manageJobsWithoutQueueName: true with
// Kueue's JobSet or Job integration on. Kueue then suspends and queues every
// unlabelled JobSet, or Job, whose ancestors are no kind of an enabled
// Kueue integration (jobframework.WorkloadShouldBeSuspended: a TrainJob is
// none under ours), which is every JobSet Trainer creates for a TrainJob
// and every Job of it; no queue-name label comes with the suspension for
// our children webhooks to take off (their matchConditions ask for it),
// and were they to unsuspend the child, Kueue's reconciler would stop it
// again for want of its own admission. The admitted TrainJob would hold
// its quota and never run. Kueue's pod integration is no such case: our
// pod webhook takes a TrainJob's pods back by their managed label.
func unlabelledChildrenQueued(cfg *configapi.Configuration) error {
	if !cfg.ManageJobsWithoutQueueName || cfg.Integrations == nil {
		return nil
	}
	for _, f := range []string{jobSetFramework, jobFramework} {
		if slices.Contains(cfg.Integrations.Frameworks, f) {
			return fmt.Errorf("the Kueue configuration sets manageJobsWithoutQueueName: true with Kueue's %q integration on: Kueue would queue every %s Trainer creates for a TrainJob a second time, a Workload of its own beside the TrainJob's, and an admitted TrainJob would not run to completion. Set manageJobsWithoutQueueName: false (label the jobs to queue; a LocalQueue named default queues unlabelled ones), or turn Kueue's JobSet and Job integrations off", f, map[string]string{jobSetFramework: "JobSet", jobFramework: "Job of the JobSets"}[f])
		}
	}
	return nil
}

// SettingsOf takes the settings that must agree with the deployed Kueue
// from its own Configuration, under the feature gates this process set
// for Kueue (ApplyFeatureGates), and refuses the set-ups that can't work,
// saying why. A Kueue that still runs its built-in TrainJob integration is
// not refused: the manager stands by (BuiltInTrainJob), which is how a
// live cluster switches from that integration to ours.
func SettingsOf(cfg *configapi.Configuration) (KueueSettings, error) {
	out := KueueSettings{BuiltInTrainJob: BuiltInTrainJob(cfg)}
	if err := unlabelledChildrenQueued(cfg); err != nil {
		return out, err
	}
	if cfg.Integrations != nil && slices.Contains(cfg.Integrations.ExternalFrameworks, TrainJobExternalFramework) {
		return out, fmt.Errorf("the Kueue configuration lists %q in integrations.externalFrameworks: Kueue's Job and JobSet reconcilers would then look for the TrainJob's Workloads through an index Kueue does not have and fail in a loop. Remove it; trainjob-kueue needs no entry there", TrainJobExternalFramework)
	}
	out.ManageJobsWithoutQueueName = cfg.ManageJobsWithoutQueueName
	if cfg.ManagedJobsNamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(cfg.ManagedJobsNamespaceSelector)
		if err != nil {
			return out, fmt.Errorf("managedJobsNamespaceSelector: %w", err)
		}
		out.ManagedJobsNamespaceSelector = sel
	} else {
		out.ManagedJobsNamespaceSelector = labels.Everything()
	}
	out.WaitForPodsReady = waitforpodsready.Enabled(cfg.WaitForPodsReady)
	if w := cfg.WaitForPodsReady; w != nil {
		out.PodsReadyTimeouts.Timeout = w.Timeout.Duration
		if w.RecoveryTimeout != nil {
			out.PodsReadyTimeouts.Recovery = &w.RecoveryTimeout.Duration
		}
	}
	if cfg.Integrations != nil {
		out.LabelKeysToCopy = cfg.Integrations.LabelKeysToCopy
	}
	// LocalQueueDefaulting is GA since Kueue v0.17 (no gate any more); a
	// configuration written for an older Kueue may still turn it off.
	// (A missing gate is on: the value alone would read it as off.)
	_, retired := SplitFeatureGates(cfg.FeatureGates)
	on, set := retired[GateLocalQueueDefaulting]
	out.LocalQueueDefaulting = on || !set
	out.MultiKueue = cfg.MultiKueue != nil && slices.ContainsFunc(cfg.MultiKueue.ExternalFrameworks, func(f configapi.MultiKueueExternalFramework) bool {
		return f.Name == TrainJobExternalFramework
	}) && features.Enabled(features.MultiKueue) && features.Enabled(features.MultiKueueAdaptersForCustomJobs)
	out.KueueNamespace, out.MultiKueueOrigin = "kueue-system", "multikueue"
	if cfg.Namespace != nil && *cfg.Namespace != "" {
		out.KueueNamespace = *cfg.Namespace
	}
	if cfg.MultiKueue != nil && cfg.MultiKueue.Origin != nil && *cfg.MultiKueue.Origin != "" {
		out.MultiKueueOrigin = *cfg.MultiKueue.Origin
	}
	out.PriorityBoost = features.Enabled(features.PriorityBoost)
	return out, nil
}

// ApplyFeatureGates sets Kueue's process-wide feature gates as the deployed
// Kueue's Configuration sets them (gates the linked Kueue no longer knows
// are left to SettingsOf), then extra (--feature-gates) over them.
func ApplyFeatureGates(cfg *configapi.Configuration, extra string) error {
	known, _ := SplitFeatureGates(cfg.FeatureGates)
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(known); err != nil {
		return fmt.Errorf("feature gates of the Kueue configuration: %w", err)
	}
	if extra != "" {
		if err := utilfeature.DefaultMutableFeatureGate.Set(extra); err != nil {
			return fmt.Errorf("--feature-gates: %w", err)
		}
	}
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
