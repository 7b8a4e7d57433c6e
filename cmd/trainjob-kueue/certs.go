package main

import (
	"fmt"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Names the webhook certificates are managed under; they match config/.
const (
	mutatingWebhookConfiguration   = "trainjob-kueue-mutating-webhook-configuration"
	validatingWebhookConfiguration = "trainjob-kueue-validating-webhook-configuration"
)

// manageCerts generates and rotates the webhook serving certificate into a
// Secret and the webhook configurations' caBundle, as Kueue and Trainer do.
// ready closes once the certificate is in place.
func manageCerts(mgr ctrl.Manager, f flags, ready chan struct{}) error {
	if f.certManagement != "internal" {
		close(ready)
		return nil
	}
	if f.namespace == "" {
		return fmt.Errorf("internal certificate management needs the manager's namespace: set --namespace or POD_NAMESPACE")
	}
	return rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: f.namespace, Name: f.webhookSecret},
		CertDir:        f.webhookCertDir,
		CAName:         "trainjob-kueue-ca",
		CAOrganization: "trainjob-kueue",
		DNSName:        fmt.Sprintf("%s.%s.svc", f.webhookService, f.namespace),
		IsReady:        ready,
		Webhooks: []rotator.WebhookInfo{
			{Name: mutatingWebhookConfiguration, Type: rotator.Mutating},
			{Name: validatingWebhookConfiguration, Type: rotator.Validating},
		},
		RequireLeaderElection: f.leaderElect,
	})
}
