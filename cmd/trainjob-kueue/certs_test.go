package main

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func TestTheCertRotatorRunsOnEveryReplica(t *testing.T) {
	r, err := certRotator(flags{leaderElect: true, namespace: "trainjob-kueue-system", webhookSecret: "s", webhookService: "svc"}, make(chan struct{}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.RequireLeaderElection {
		t.Error("with leader election the standby's rotator would never run, and the standby never become ready")
	}
	if r.DNSName != "svc.trainjob-kueue-system.svc" {
		t.Errorf("certificate DNS name %q", r.DNSName)
	}
	if _, err := certRotator(flags{}, make(chan struct{}), 0); err == nil {
		t.Error("internal certificates without a namespace: want an error")
	}
}

// A restart in process for a mode change sets the certificate rotator up
// again in the same process: each run's rotator controller has a name of
// its own, where the same name twice is refused (and exited the process).
func TestTheCertRotatorIsSetUpAgainInARestartInProcess(t *testing.T) {
	f := flags{certManagement: "internal", namespace: "trainjob-kueue-system", webhookSecret: "s", webhookService: "svc", webhookCertDir: t.TempDir()}
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
