package workloadapi_test

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// Kueue installed so that its MutatingWebhookConfiguration sorts after
// ours (by Helm as release "zz", or any name past "trainjob-kueue-…"):
// the API server calls ours first, before Kueue's has given a TrainJob's
// JobSet, Jobs and pods its queue label, and calls ours again after it.
// An unlabelled TrainJob in a namespace with a LocalQueue named default
// is queued once, as its TrainJob, at every poll until it completes.
func TestChildrenWebhooksWorkWhateverTheConfigurationsOrder(t *testing.T) {
	kueueConfig := kueueMutatingConfiguration(t)
	renamed := kueueConfig.DeepCopy()
	renamed.ObjectMeta = metav1.ObjectMeta{Name: "zz-" + kueueConfig.Name, Labels: kueueConfig.Labels, Annotations: kueueConfig.Annotations}
	fixtures.Create(t, ctx, k8s, renamed)
	deleteObject(t, kueueConfig)
	t.Cleanup(func() {
		restored := kueueConfig.DeepCopy()
		restored.ObjectMeta = metav1.ObjectMeta{Name: kueueConfig.Name, Labels: kueueConfig.Labels, Annotations: kueueConfig.Annotations}
		if err := k8s.Create(ctx, restored); err != nil {
			t.Errorf("restoring Kueue's webhook configuration: %v", err)
		}
		_ = k8s.Delete(ctx, renamed)
	})
	if renamed.Name < "trainjob-kueue-mutating-webhook-configuration" {
		t.Fatalf("%s sorts before ours: the case is not played", renamed.Name)
	}
	ns := fixtures.NamespaceWithDefaultQueue(t, ctx, k8s, "order")
	fixtures.RunQueuedOnce(t, ctx, k8s, ns, "plain")
}

// kueueMutatingConfiguration is the MutatingWebhookConfiguration of
// Kueue's webhooks (kubebuilder's names, .kb.io; the local cluster
// installs it as kueue-…).
func kueueMutatingConfiguration(t *testing.T) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	var list admissionregistrationv1.MutatingWebhookConfigurationList
	if err := k8s.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		c := &list.Items[i]
		if !strings.HasPrefix(c.Name, "kueue-") {
			continue
		}
		for _, w := range c.Webhooks {
			if strings.HasSuffix(w.Name, ".kb.io") {
				return c
			}
		}
	}
	t.Fatal("no MutatingWebhookConfiguration of Kueue's")
	return nil
}
