package main

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// A harness-scale ClusterQueue holds every Workload after its quota
// reservation (the hold check), with quota for any N of GPUs and CPUs; its
// memory quota is left as it was.
func TestAHoldingClusterQueueChecksEveryWorkloadAndFitsAnyN(t *testing.T) {
	_, cq, _ := fixtures.Queue(ns, "bench-0", pool)
	before := slices.Clone(cq.Spec.ResourceGroups[0].Flavors[0].Resources)
	holding(cq)
	if s := cq.Spec.AdmissionChecksStrategy; s == nil || len(s.AdmissionChecks) != 1 || s.AdmissionChecks[0].Name != holdCheck {
		t.Fatalf("admission checks %+v, want the hold check", s)
	}
	for i, r := range cq.Spec.ResourceGroups[0].Flavors[0].Resources {
		switch {
		case r.Name == corev1.ResourceMemory:
			if !r.NominalQuota.Equal(before[i].NominalQuota) {
				t.Errorf("memory quota %s, want it as it was", r.NominalQuota.String())
			}
		case r.NominalQuota.Value() < 15000*2:
			t.Errorf("%s quota %s holds fewer than 15,000 jobs of 2", r.Name, r.NominalQuota.String())
		}
	}
}

// A harness-scale run streams every job (Kueue with its shipped client
// budget exits under a burst of thousands of Workloads); the others burst
// half of them.
func TestAHarnessScaleRunStreamsEveryJob(t *testing.T) {
	if got := burstOf(options{Flags: loadharness.Flags{N: 15000}, hold: true}); got != 0 {
		t.Errorf("harness-scale burst %d, want 0", got)
	}
	if got := burstOf(options{Flags: loadharness.Flags{N: 500}}); got != 250 {
		t.Errorf("burst %d, want half of 500", got)
	}
}
