package main

import (
	"fmt"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// manageCerts generates and rotates the webhook serving certificate into a
// Secret and the webhook configurations' caBundle, as Kueue and Trainer do.
// ready closes once the certificate is in place. run counts the process's
// earlier runs (restarts in process for a mode change).
func manageCerts(mgr ctrl.Manager, f flags, ready chan struct{}, run int) error {
	if f.certManagement != "internal" {
		close(ready)
		return nil
	}
	r, err := certRotator(f, ready, run)
	if err != nil {
		return err
	}
	return rotator.AddRotator(mgr, r)
}

// certRotator runs on every replica, leader or not, as Kueue's does: every
// replica serves the webhooks and waits for the certificate before it is
// ready, so a rotator on the leader alone would leave the standby unready
// for ever and the webhook without failover.
//
// Its controller is named once per process: cert-controller builds it
// without the manager's options, so a restart in process (a mode change)
// naming it again would fail as a duplicate controller name and exit the
// process, counted as a crash, with the webhook down until the container
// restarted. Each run after the first names its own.
func certRotator(f flags, ready chan struct{}, run int) (*rotator.CertRotator, error) {
	if f.namespace == "" {
		return nil, fmt.Errorf("internal certificate management needs the manager's namespace: set --namespace or POD_NAMESPACE")
	}
	if f.mutatingWebhooks == "" || f.validatingWebhooks == "" {
		return nil, fmt.Errorf("internal certificate management needs the webhook configurations' names: set --mutating-webhook-configuration-name and --validating-webhook-configuration-name")
	}
	return &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: f.namespace, Name: f.webhookSecret},
		CertDir:        f.webhookCertDir,
		CAName:         "trainjob-kueue-ca",
		CAOrganization: "trainjob-kueue",
		DNSName:        fmt.Sprintf("%s.%s.svc", f.webhookService, f.namespace),
		IsReady:        ready,
		Webhooks: []rotator.WebhookInfo{
			{Name: f.mutatingWebhooks, Type: rotator.Mutating},
			{Name: f.validatingWebhooks, Type: rotator.Validating},
		},
		RequireLeaderElection: false,
		ControllerName:        rotatorName(run),
	}, nil
}

// rotatorName is the certificate rotator's controller name in a run.
func rotatorName(run int) string {
	if run == 0 {
		return "cert-rotator"
	}
	return fmt.Sprintf("cert-rotator-run-%d", run+1)
}
