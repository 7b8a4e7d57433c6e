package forecast

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	corev1 "k8s.io/api/core/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestLendableIsUnusedNominalQuotaCappedByTheLendingLimit(t *testing.T) {
	gpus := func(nominal, lendingLimit string) fixtures.ResourceQuota {
		return fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: nominal, LendingLimit: lendingLimit}
	}
	cases := map[string]struct {
		cq   *kueue.ClusterQueue
		want map[string]corev1.ResourceList
	}{
		"an idle queue lends all its nominal quota": {
			cq:   fixtures.GPUQueue("team-a", "research", fixtures.FlavorQuotas("a100", gpus("8", ""))),
			want: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "8")},
		},
		"what its workloads reserve is not lent": {
			cq:   fixtures.Reserving(fixtures.GPUQueue("team-a", "research", fixtures.FlavorQuotas("a100", gpus("8", ""))), "a100", fixtures.Requests(t, "nvidia.com/gpu", "3")),
			want: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "5")},
		},
		"a fully used flavor lends nothing, and is left out": {
			cq:   fixtures.Reserving(fixtures.GPUQueue("team-a", "research", fixtures.FlavorQuotas("a100", gpus("8", "")), fixtures.FlavorQuotas("h100", gpus("4", ""))), "a100", fixtures.Requests(t, "nvidia.com/gpu", "8")),
			want: map[string]corev1.ResourceList{"h100": fixtures.Requests(t, "nvidia.com/gpu", "4")},
		},
		"a queue borrowing beyond its quota lends nothing": {
			cq:   fixtures.Reserving(fixtures.GPUQueue("team-a", "research", fixtures.FlavorQuotas("a100", gpus("8", ""))), "a100", fixtures.Requests(t, "nvidia.com/gpu", "10")),
			want: map[string]corev1.ResourceList{},
		},
		"the lending limit caps what is unused": {
			cq:   fixtures.Reserving(fixtures.GPUQueue("team-a", "research", fixtures.FlavorQuotas("a100", gpus("8", "2"))), "a100", fixtures.Requests(t, "nvidia.com/gpu", "3")),
			want: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "2")},
		},
		"a lending limit above what is unused changes nothing": {
			cq:   fixtures.Reserving(fixtures.GPUQueue("team-a", "research", fixtures.FlavorQuotas("a100", gpus("8", "6"))), "a100", fixtures.Requests(t, "nvidia.com/gpu", "3")),
			want: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "5")},
		},
		"each resource on its own": {
			cq: fixtures.Reserving(fixtures.ClusterQueueOf("team-a", "research",
				fixtures.ResourceGroup([]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory},
					fixtures.FlavorQuotas("cpu-nodes", fixtures.ResourceQuota{Name: corev1.ResourceCPU, Nominal: "64"}, fixtures.ResourceQuota{Name: corev1.ResourceMemory, Nominal: "256Gi"})),
				fixtures.ResourceGroup([]corev1.ResourceName{fixtures.GPU}, fixtures.FlavorQuotas("a100", gpus("8", "")))),
				"cpu-nodes", fixtures.Requests(t, "cpu", "64", "memory", "56Gi")),
			want: map[string]corev1.ResourceList{
				"cpu-nodes": fixtures.Requests(t, "memory", "200Gi"),
				"a100":      fixtures.Requests(t, "nvidia.com/gpu", "8"),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, lendable(tc.cq)); diff != "" {
				t.Errorf("lendable (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCohortLendsSumsTheOtherMembersNowAndIdle(t *testing.T) {
	teamA := fixtures.Reserving(fixtures.GPUQueue("team-a", "research", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"})), "a100", fixtures.Requests(t, "nvidia.com/gpu", "6"))
	teamB := fixtures.Reserving(fixtures.GPUQueue("team-b", "research",
		fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "16", LendingLimit: "4"}),
		fixtures.FlavorQuotas("h100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"})),
		"h100", fixtures.Requests(t, "nvidia.com/gpu", "8"))
	cases := map[string]struct {
		members  []*kueue.ClusterQueue
		wantNow  map[string]corev1.ResourceList
		wantIdle map[string]corev1.ResourceList
	}{
		"no other member": {
			wantNow: map[string]corev1.ResourceList{}, wantIdle: map[string]corev1.ResourceList{},
		},
		"one member": {
			members:  []*kueue.ClusterQueue{teamA},
			wantNow:  map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "2")},
			wantIdle: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "8")},
		},
		// Idle, team-b still lends no more than its lending limit of a100,
		// and all of its h100.
		"several members add up": {
			members:  []*kueue.ClusterQueue{teamA, teamB},
			wantNow:  map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "6")},
			wantIdle: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "12"), "h100": fixtures.Requests(t, "nvidia.com/gpu", "8")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now, idle := CohortLends(tc.members)
			if diff := cmp.Diff(tc.wantNow, now); diff != "" {
				t.Errorf("lends now (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantIdle, idle); diff != "" {
				t.Errorf("lends idle (-want +got):\n%s", diff)
			}
		})
	}
	// Picturing the members idle must not empty the ClusterQueues read.
	if len(teamA.Status.FlavorsReservation) != 1 || len(teamB.Status.FlavorsReservation) != 1 {
		t.Errorf("CohortLends changed its members' reservations: %v, %v", teamA.Status.FlavorsReservation, teamB.Status.FlavorsReservation)
	}
}
