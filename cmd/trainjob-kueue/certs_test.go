package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func TestTheCertRotatorRunsOnEveryReplica(t *testing.T) {
	f := flags{leaderElect: true, namespace: "trainjob-kueue-system", webhookSecret: "s", webhookService: "svc", mutatingWebhooks: "m", validatingWebhooks: "v"}
	r, err := certRotator(f, make(chan struct{}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.RequireLeaderElection {
		t.Error("with leader election the standby's rotator would never run, and the standby never become ready")
	}
	if r.DNSName != "svc.trainjob-kueue-system.svc" {
		t.Errorf("certificate DNS name %q", r.DNSName)
	}
	// The webhook configurations are the install's, by name: a renamed
	// install (a namePrefix) names them by flag.
	if diff := cmp.Diff([]rotator.WebhookInfo{{Name: "m", Type: rotator.Mutating}, {Name: "v", Type: rotator.Validating}}, r.Webhooks); diff != "" {
		t.Errorf("webhook configurations kept (-want +got):\n%s", diff)
	}
	if _, err := certRotator(flags{}, make(chan struct{}), 0); err == nil {
		t.Error("internal certificates without a namespace: want an error")
	}
	unnamed := f
	unnamed.validatingWebhooks = ""
	if _, err := certRotator(unnamed, make(chan struct{}), 0); err == nil || !strings.Contains(err.Error(), "--validating-webhook-configuration-name") {
		t.Errorf("internal certificates without a webhook configuration's name: %v, want an error naming the flag", err)
	}
}

// A restart in process for a mode change sets the certificate rotator up
// again in the same process: each run's rotator controller has a name of
// its own, where the same name twice is refused (and exited the process).
func TestTheCertRotatorIsSetUpAgainInARestartInProcess(t *testing.T) {
	f := flags{certManagement: "internal", namespace: "trainjob-kueue-system", webhookSecret: "s", webhookService: "svc", webhookCertDir: t.TempDir(), mutatingWebhooks: "m", validatingWebhooks: "v"}
	newMgr := func() ctrl.Manager {
		m, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for run := range 3 {
		if err := manageCerts(newMgr(), f, make(chan struct{}), run); err != nil {
			t.Fatalf("run %d: %v", run+1, err)
		}
	}
	// The check this guards against is real: a name used again is refused.
	if err := manageCerts(newMgr(), f, make(chan struct{}), 1); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("the rotator of run 2 set up twice: %v, want a duplicate name refused", err)
	}
}
