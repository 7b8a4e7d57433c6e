package explain

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
)

func TestQuotaLines(t *testing.T) {
	q := resource.MustParse
	twoGroups := func(cohort string) *kueue.ClusterQueue {
		cq := fixtures.ClusterQueueOf("cq-a", cohort,
			fixtures.ResourceGroup([]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}, fixtures.FlavorQuotas("cpu-nodes",
				fixtures.ResourceQuota{Name: corev1.ResourceCPU, Nominal: "64"}, fixtures.ResourceQuota{Name: corev1.ResourceMemory, Nominal: "256Gi", BorrowingLimit: "64Gi"})),
			fixtures.ResourceGroup([]corev1.ResourceName{fixtures.GPU},
				fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8", BorrowingLimit: "4"}),
				fixtures.FlavorQuotas("h100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "16"})))
		fixtures.Reserving(cq, "a100", fixtures.Requests(t, "nvidia.com/gpu", "6"))
		return fixtures.Reserving(cq, "cpu-nodes", fixtures.Requests(t, "cpu", "10", "memory", "40Gi"))
	}
	lends := map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "2"), "cpu-nodes": fixtures.Requests(t, "memory", "32Gi")}
	cases := map[string]struct {
		cq   *kueue.ClusterQueue
		want []quotaLine
	}{
		// In the order of the ClusterQueue's spec: group, flavor, resource.
		"a ClusterQueue in a cohort": {
			cq: twoGroups("research"),
			want: []quotaLine{
				{Flavor: "cpu-nodes", Resource: corev1.ResourceCPU, Nominal: q("64"), Used: q("10")},
				{Flavor: "cpu-nodes", Resource: corev1.ResourceMemory, Nominal: q("256Gi"), BorrowingLimit: ptr.To(q("64Gi")), Used: q("40Gi"), CohortLends: q("32Gi")},
				{Flavor: "a100", Resource: fixtures.GPU, Nominal: q("8"), BorrowingLimit: ptr.To(q("4")), Used: q("6"), CohortLends: q("2")},
				{Flavor: "h100", Resource: fixtures.GPU, Nominal: q("16")},
			},
		},
		"a ClusterQueue in no cohort borrows nothing": {
			cq: twoGroups(""),
			want: []quotaLine{
				{Flavor: "cpu-nodes", Resource: corev1.ResourceCPU, Nominal: q("64"), Used: q("10")},
				{Flavor: "cpu-nodes", Resource: corev1.ResourceMemory, Nominal: q("256Gi"), BorrowingLimit: ptr.To(q("64Gi")), Used: q("40Gi")},
				{Flavor: "a100", Resource: fixtures.GPU, Nominal: q("8"), BorrowingLimit: ptr.To(q("4")), Used: q("6")},
				{Flavor: "h100", Resource: fixtures.GPU, Nominal: q("16")},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ex := Explain(Input{Job: "ml/llama", LocalQueue: "team-a", Queue: &forecast.Queue{ClusterQueue: tc.cq, CohortLends: lends}})
			if diff := cmp.Diff(tc.want, ex.Quota); diff != "" {
				t.Errorf("quota (-want +got):\n%s", diff)
			}
			if ex.ClusterQueue != "cq-a" || ex.Cohort != string(tc.cq.Spec.CohortName) {
				t.Errorf("ClusterQueue %q, cohort %q; want cq-a, %q", ex.ClusterQueue, ex.Cohort, tc.cq.Spec.CohortName)
			}
			// The explanation is handed out: editing it leaves the
			// ClusterQueue read as it was.
			ex.Quota[1].BorrowingLimit.Add(q("1Gi"))
			if limit := tc.cq.Spec.ResourceGroups[0].Flavors[0].Resources[1].BorrowingLimit; limit.String() != "64Gi" {
				t.Errorf("the ClusterQueue's borrowing limit became %s", limit.String())
			}
		})
	}
}

// kubectl trainjob-kueue explain -o json prints an Explanation: its keys
// are what scripts read.
func TestExplanationJSONKeys(t *testing.T) {
	cases := map[string]struct {
		ex   Explanation
		want map[string]any
	}{
		"a job in no queue leaves the queue's keys out": {
			ex:   Explanation{Job: "ml/llama", State: lifecycle.NotQueued, Verdict: "not queued"},
			want: map[string]any{"trainJob": "ml/llama", "state": "NotQueued", "roles": nil, "verdict": "not queued"},
		},
		"a pending job": {
			ex: Explanation{Job: "ml/llama", LocalQueue: "team-a", ClusterQueue: "cq-a", Cohort: "research", State: lifecycle.Queued,
				RuntimeFrom: "snapshot", Position: &Position{InLocalQueue: 1, InClusterQueue: 2}, PositionNote: "note", KueueSays: "waiting",
				Roles: []roleExplanation{{Name: "node", Count: 2, PerPod: fixtures.Requests(t, "nvidia.com/gpu", "8"), Total: fixtures.Requests(t, "nvidia.com/gpu", "16"),
					Candidates: []forecast.Candidate{{Flavor: "a100", Fit: forecast.NoFit, Short: fixtures.Requests(t, "nvidia.com/gpu", "4")}}}},
				Verdict: "pending"},
			want: map[string]any{
				"trainJob": "ml/llama", "localQueue": "team-a", "clusterQueue": "cq-a", "cohort": "research", "state": "Queued",
				"runtimeFrom": "snapshot", "position": map[string]any{"inLocalQueue": 1.0, "inClusterQueue": 2.0}, "positionNote": "note",
				"kueueSays": "waiting", "verdict": "pending",
				"roles": []any{map[string]any{"name": "node", "count": 2.0, "perPod": map[string]any{"nvidia.com/gpu": "8"}, "total": map[string]any{"nvidia.com/gpu": "16"},
					"candidates": []any{map[string]any{"flavor": "a100", "fit": "NoFit", "short": map[string]any{"nvidia.com/gpu": "4"}}}}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			data, err := json.Marshal(tc.ex)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
		})
	}
}

// explain's table maps every lifecycle state to a verdict.
func TestEveryStateHasAVerdict(t *testing.T) {
	if missing := lifecycle.Unmapped(func(s lifecycle.State) bool { _, ok := verdictOf(s); return ok }); len(missing) > 0 {
		t.Errorf("explain has no verdict for the states %v (explain/verdict.go)", missing)
	}
}
