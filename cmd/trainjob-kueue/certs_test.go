package main

import "testing"

func TestTheCertRotatorRunsOnEveryReplica(t *testing.T) {
	r, err := certRotator(flags{leaderElect: true, namespace: "trainjob-kueue-system", webhookSecret: "s", webhookService: "svc"}, make(chan struct{}))
	if err != nil {
		t.Fatal(err)
	}
	if r.RequireLeaderElection {
		t.Error("with leader election the standby's rotator would never run, and the standby never become ready")
	}
	if r.DNSName != "svc.trainjob-kueue-system.svc" {
		t.Errorf("certificate DNS name %q", r.DNSName)
	}
	if _, err := certRotator(flags{}, make(chan struct{})); err == nil {
		t.Error("internal certificates without a namespace: want an error")
	}
}
