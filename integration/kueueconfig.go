package integration

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/util/waitforpodsready"
)

// InTreeFramework is the name of Kueue's built-in TrainJob integration.
const InTreeFramework = "trainer.kubeflow.org/trainjob"

// FromKueueConfig takes the settings that must agree with the deployed Kueue
// from its own Configuration. A Kueue that still runs its built-in TrainJob
// integration would create a second Workload for every TrainJob: refuse.
func FromKueueConfig(cfg *configapi.Configuration, opts *Options) error {
	if cfg.Integrations != nil && slices.Contains(cfg.Integrations.Frameworks, InTreeFramework) {
		return fmt.Errorf("the Kueue configuration enables the built-in %q integration in integrations.frameworks: every TrainJob would get two Workloads. Remove it from the Kueue configuration (and restart Kueue) before running trainjob-kueue", InTreeFramework)
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
	if cfg.Integrations != nil {
		opts.LabelKeysToCopy = cfg.Integrations.LabelKeysToCopy
	}
	return nil
}
