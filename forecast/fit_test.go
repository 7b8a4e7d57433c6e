package forecast

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

func TestEligible(t *testing.T) {
	spot := corev1.Taint{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	evicting := corev1.Taint{Key: "maintenance", Value: "soon", Effect: corev1.TaintEffectNoExecute}
	flavor := func(labels map[string]string, taints []corev1.Taint, tolerations []corev1.Toleration) *kueue.ResourceFlavor {
		rf := fixtures.ResourceFlavor("a100", labels)
		rf.Spec.NodeTaints, rf.Spec.Tolerations = taints, tolerations
		return rf
	}
	cases := map[string]struct {
		pods   corev1.PodSpec
		flavor *kueue.ResourceFlavor
		// wantWhy is "" for an eligible flavor.
		wantWhy string
	}{
		"a ResourceFlavor that does not exist": {
			wantWhy: "the ResourceFlavor does not exist",
		},
		"a flavor without labels or taints": {
			flavor: flavor(nil, nil, nil),
		},
		"a PreferNoSchedule taint the pods don't tolerate: a preference, as Kueue weighs it": {
			flavor: flavor(nil, []corev1.Taint{{Key: "spot", Value: "true", Effect: corev1.TaintEffectPreferNoSchedule}}, nil),
		},
		"pods selecting what the flavor's nodes have": {
			pods:   corev1.PodSpec{NodeSelector: map[string]string{"gpu": "a100"}},
			flavor: flavor(map[string]string{"gpu": "a100", "zone": "eu-1"}, nil, nil),
		},
		"pods selecting on a label the flavor does not name": {
			pods:   corev1.PodSpec{NodeSelector: map[string]string{"team": "vision"}},
			flavor: flavor(map[string]string{"gpu": "a100"}, nil, nil),
		},
		"pods selecting other nodes": {
			pods:    corev1.PodSpec{NodeSelector: map[string]string{"gpu": "h100"}},
			flavor:  flavor(map[string]string{"gpu": "a100"}, nil, nil),
			wantWhy: "the pods' nodeSelector gpu=h100 contradicts the flavor's node label gpu=a100",
		},
		"several contradictions: the first label in order is named": {
			pods:    corev1.PodSpec{NodeSelector: map[string]string{"zone": "us-1", "gpu": "h100"}},
			flavor:  flavor(map[string]string{"zone": "eu-1", "gpu": "a100"}, nil, nil),
			wantWhy: "the pods' nodeSelector gpu=h100 contradicts the flavor's node label gpu=a100",
		},
		"a taint the pods don't tolerate": {
			flavor:  flavor(nil, []corev1.Taint{spot}, nil),
			wantWhy: "the pods don't tolerate the flavor's node taint spot=true:NoSchedule",
		},
		"a taint the pods tolerate by value": {
			pods: corev1.PodSpec{Tolerations: []corev1.Toleration{{
				Key: "spot", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule,
			}}},
			flavor: flavor(nil, []corev1.Taint{spot}, nil),
		},
		"a taint the pods tolerate whatever its value": {
			pods:   corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}},
			flavor: flavor(nil, []corev1.Taint{spot}, nil),
		},
		"a toleration of another value": {
			pods: corev1.PodSpec{Tolerations: []corev1.Toleration{{
				Key: "spot", Operator: corev1.TolerationOpEqual, Value: "false", Effect: corev1.TaintEffectNoSchedule,
			}}},
			flavor:  flavor(nil, []corev1.Taint{spot}, nil),
			wantWhy: "the pods don't tolerate the flavor's node taint spot=true:NoSchedule",
		},
		"the second taint is not tolerated": {
			pods:    corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}},
			flavor:  flavor(nil, []corev1.Taint{spot, evicting}, nil),
			wantWhy: "the pods don't tolerate the flavor's node taint maintenance=soon:NoExecute",
		},
		// Kueue adds the flavor's tolerations to the pods it admits there.
		"a taint the flavor's own tolerations tolerate": {
			flavor: flavor(nil, []corev1.Taint{spot}, []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}),
		},
		"contradicting labels are named before taints": {
			pods:    corev1.PodSpec{NodeSelector: map[string]string{"gpu": "h100"}},
			flavor:  flavor(map[string]string{"gpu": "a100"}, []corev1.Taint{spot}, nil),
			wantWhy: "the pods' nodeSelector gpu=h100 contradicts the flavor's node label gpu=a100",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := eligible(&tc.pods, tc.flavor); got != tc.wantWhy {
				t.Errorf("got %q, want %q", got, tc.wantWhy)
			}
		})
	}
}

func TestAssign(t *testing.T) {
	gpus := func(n string) corev1.ResourceList { return fixtures.Requests(t, "nvidia.com/gpu", n) }
	a100, h100 := fixtures.ResourceFlavor("a100", map[string]string{"gpu": "a100"}), fixtures.ResourceFlavor("h100", map[string]string{"gpu": "h100"})
	cpuNodes := fixtures.ResourceFlavor("cpu-nodes", nil)
	twoFlavors := func(cohort, a100GPUs, h100GPUs string) *kueue.ClusterQueue {
		return fixtures.GPUQueue("cq", cohort,
			fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: a100GPUs}),
			fixtures.FlavorQuotas("h100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: h100GPUs}))
	}
	tryNextFlavor := func(cq *kueue.ClusterQueue) *kueue.ClusterQueue {
		cq.Spec.FlavorFungibility = &kueue.FlavorFungibility{WhenCanBorrow: kueue.TryNextFlavor}
		return cq
	}
	onH100 := fixtures.PodRole("node", 1, gpus("4"))
	onH100.Template.Spec.NodeSelector = map[string]string{"gpu": "h100"}
	lendsBoth := map[string]corev1.ResourceList{"a100": gpus("8"), "h100": gpus("8")}
	cpuAndGPUGroups := fixtures.ClusterQueueOf("cq", "",
		fixtures.ResourceGroup([]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}, fixtures.FlavorQuotas("cpu-nodes",
			fixtures.ResourceQuota{Name: corev1.ResourceCPU, Nominal: "64"}, fixtures.ResourceQuota{Name: corev1.ResourceMemory, Nominal: "256Gi"})),
		fixtures.ResourceGroup([]corev1.ResourceName{fixtures.GPU}, fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"})))

	cases := map[string]struct {
		roles      []podsets.Role
		queue      *Queue
		want       Assignment
		wantCanFit bool
	}{
		"the first flavor with room": {
			roles: []podsets.Role{fixtures.PodRole("node", 2, gpus("2"))},
			queue: &Queue{ClusterQueue: twoFlavors("", "8", "8"), Flavors: fixtures.FlavorsByName(a100, h100)},
			want: Assignment{Roles: []RoleAssignment{{Role: "node", Picked: []string{"a100"},
				Candidates: []Candidate{{Flavor: "a100", Fit: Fits}}}}},
			wantCanFit: true,
		},
		"a full flavor is passed over": {
			roles: []podsets.Role{fixtures.PodRole("node", 2, gpus("2"))},
			queue: &Queue{ClusterQueue: fixtures.Reserving(twoFlavors("", "8", "8"), "a100", gpus("6")), Flavors: fixtures.FlavorsByName(a100, h100)},
			want: Assignment{Roles: []RoleAssignment{{Role: "node", Picked: []string{"h100"},
				Candidates: []Candidate{{Flavor: "a100", Fit: NoFit, Short: gpus("2")}, {Flavor: "h100", Fit: Fits}}}}},
			wantCanFit: true,
		},
		"no flavor has room": {
			roles: []podsets.Role{fixtures.PodRole("node", 2, gpus("8"))},
			queue: &Queue{ClusterQueue: twoFlavors("", "8", "12"), Flavors: fixtures.FlavorsByName(a100, h100)},
			want: Assignment{Roles: []RoleAssignment{{Role: "node", Picked: []string{""},
				Candidates: []Candidate{{Flavor: "a100", Fit: NoFit, Short: gpus("8")}, {Flavor: "h100", Fit: NoFit, Short: gpus("4")}}}}},
		},
		"a flavor the pods can't run on is passed over": {
			roles: []podsets.Role{onH100},
			queue: &Queue{ClusterQueue: twoFlavors("", "8", "8"), Flavors: fixtures.FlavorsByName(a100, h100)},
			want: Assignment{Roles: []RoleAssignment{{Role: "node", Picked: []string{"h100"}, Candidates: []Candidate{
				{Flavor: "a100", Fit: Ineligible, Why: "the pods' nodeSelector gpu=h100 contradicts the flavor's node label gpu=a100"},
				{Flavor: "h100", Fit: Fits},
			}}}},
			wantCanFit: true,
		},
		"a flavor whose ResourceFlavor does not exist": {
			roles: []podsets.Role{fixtures.PodRole("node", 1, gpus("4"))},
			queue: &Queue{ClusterQueue: fixtures.Reserving(twoFlavors("", "8", "8"), "a100", gpus("8")), Flavors: fixtures.FlavorsByName(a100)},
			want: Assignment{Roles: []RoleAssignment{{Role: "node", Picked: []string{""}, Candidates: []Candidate{
				{Flavor: "a100", Fit: NoFit, Short: gpus("4")},
				{Flavor: "h100", Fit: Ineligible, Why: "the ResourceFlavor does not exist"},
			}}}},
		},
		"borrowing stops the search by default": {
			roles: []podsets.Role{fixtures.PodRole("node", 1, gpus("8"))},
			queue: &Queue{ClusterQueue: twoFlavors("research", "4", "8"), Flavors: fixtures.FlavorsByName(a100, h100), CohortLends: lendsBoth},
			want: Assignment{Roles: []RoleAssignment{{Role: "node", Picked: []string{"a100"},
				Candidates: []Candidate{{Flavor: "a100", Fit: Borrows, Borrowed: gpus("4")}}}}},
			wantCanFit: true,
		},
		"whenCanBorrow TryNextFlavor prefers a flavor without borrowing": {
			roles: []podsets.Role{fixtures.PodRole("node", 1, gpus("8"))},
			queue: &Queue{ClusterQueue: tryNextFlavor(twoFlavors("research", "4", "8")), Flavors: fixtures.FlavorsByName(a100, h100), CohortLends: lendsBoth},
			want: Assignment{Roles: []RoleAssignment{{Role: "node", Picked: []string{"h100"},
				Candidates: []Candidate{{Flavor: "a100", Fit: Borrows, Borrowed: gpus("4")}, {Flavor: "h100", Fit: Fits}}}}},
			wantCanFit: true,
		},
		"whenCanBorrow TryNextFlavor settles for the first flavor that borrows": {
			roles: []podsets.Role{fixtures.PodRole("node", 1, gpus("8"))},
			queue: &Queue{ClusterQueue: tryNextFlavor(twoFlavors("research", "4", "2")), Flavors: fixtures.FlavorsByName(a100, h100), CohortLends: lendsBoth},
			want: Assignment{Roles: []RoleAssignment{{Role: "node", Picked: []string{"a100"},
				Candidates: []Candidate{{Flavor: "a100", Fit: Borrows, Borrowed: gpus("4")}, {Flavor: "h100", Fit: Borrows, Borrowed: gpus("6")}}}}},
			wantCanFit: true,
		},
		"the roles of one job share the quota, in role order": {
			roles: []podsets.Role{fixtures.PodRole("launcher", 1, gpus("4")), fixtures.PodRole("node", 1, gpus("4"))},
			queue: &Queue{ClusterQueue: twoFlavors("", "6", "8"), Flavors: fixtures.FlavorsByName(a100, h100)},
			want: Assignment{Roles: []RoleAssignment{
				{Role: "launcher", Picked: []string{"a100"}, Candidates: []Candidate{{Flavor: "a100", Fit: Fits}}},
				{Role: "node", Picked: []string{"h100"}, Candidates: []Candidate{{Flavor: "a100", Fit: NoFit, Short: gpus("2")}, {Flavor: "h100", Fit: Fits}}},
			}},
			wantCanFit: true,
		},
		// The launcher borrowed 4 of the 8 lent: the node can borrow only 4.
		"what one role borrows, the next can't": {
			roles: []podsets.Role{fixtures.PodRole("launcher", 1, gpus("8")), fixtures.PodRole("node", 1, gpus("6"))},
			queue: &Queue{ClusterQueue: twoFlavors("research", "4", "0"), Flavors: fixtures.FlavorsByName(a100, h100), CohortLends: map[string]corev1.ResourceList{"a100": gpus("8")}},
			want: Assignment{Roles: []RoleAssignment{
				{Role: "launcher", Picked: []string{"a100"}, Candidates: []Candidate{{Flavor: "a100", Fit: Borrows, Borrowed: gpus("4")}}},
				{Role: "node", Picked: []string{""}, Candidates: []Candidate{{Flavor: "a100", Fit: NoFit, Short: gpus("2")}, {Flavor: "h100", Fit: NoFit, Short: gpus("6")}}},
			}},
		},
		"a flavor per resource group the role uses": {
			roles: []podsets.Role{fixtures.PodRole("node", 2, fixtures.Requests(t, "cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "4"))},
			queue: &Queue{ClusterQueue: cpuAndGPUGroups, Flavors: fixtures.FlavorsByName(a100, cpuNodes)},
			want: Assignment{Roles: []RoleAssignment{{Role: "node", Picked: []string{"cpu-nodes", "a100"},
				Candidates: []Candidate{{Flavor: "cpu-nodes", Fit: Fits}, {Flavor: "a100", Fit: Fits}}}}},
			wantCanFit: true,
		},
		"a resource group the role does not use is not searched": {
			roles: []podsets.Role{fixtures.PodRole("initializer", 1, fixtures.Requests(t, "cpu", "2", "nvidia.com/gpu", "0"))},
			queue: &Queue{ClusterQueue: cpuAndGPUGroups, Flavors: fixtures.FlavorsByName(a100, cpuNodes)},
			want: Assignment{Roles: []RoleAssignment{{Role: "initializer", Picked: []string{"cpu-nodes"},
				Candidates: []Candidate{{Flavor: "cpu-nodes", Fit: Fits}}}}},
			wantCanFit: true,
		},
		"requests no resource group covers": {
			roles: []podsets.Role{
				fixtures.PodRole("launcher", 1, fixtures.Requests(t, "cpu", "1")),
				fixtures.PodRole("node", 1, fixtures.Requests(t, "nvidia.com/gpu", "1", "example.com/fpga", "2", "example.com/asic", "1", "example.com/unused", "0")),
			},
			queue: &Queue{ClusterQueue: twoFlavors("", "8", "8"), Flavors: fixtures.FlavorsByName(a100, h100)},
			want: Assignment{
				Roles: []RoleAssignment{
					{Role: "launcher"},
					{Role: "node", Picked: []string{"a100"}, Candidates: []Candidate{{Flavor: "a100", Fit: Fits}}},
				},
				Uncovered: map[string][]corev1.ResourceName{"launcher": {corev1.ResourceCPU}, "node": {"example.com/asic", fixtures.FPGA}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Assign(tc.roles, tc.queue)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Assignment (-want +got):\n%s", diff)
			}
			if got.Fits() != tc.wantCanFit {
				t.Errorf("Fits() = %v, want %v", got.Fits(), tc.wantCanFit)
			}
		})
	}
}

// Assign is a what-if: the queue it looks at is left as it was.
func TestAssignLeavesTheQueueAlone(t *testing.T) {
	cq := fixtures.Reserving(fixtures.GPUQueue("cq", "research", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"})), "a100", fixtures.Requests(t, "nvidia.com/gpu", "2"))
	q := &Queue{ClusterQueue: cq, Flavors: fixtures.FlavorsByName(fixtures.ResourceFlavor("a100", nil)), CohortLends: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "8")}}
	before := q.ClusterQueue.DeepCopy()
	lendsBefore := q.CohortLends["a100"].DeepCopy()
	Assign([]podsets.Role{fixtures.PodRole("node", 2, fixtures.Requests(t, "nvidia.com/gpu", "6"))}, q)
	if diff := cmp.Diff(before, q.ClusterQueue); diff != "" {
		t.Errorf("the ClusterQueue changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(lendsBefore, q.CohortLends["a100"]); diff != "" {
		t.Errorf("what the cohort lends changed (-before +after):\n%s", diff)
	}
}

func TestAssignmentFits(t *testing.T) {
	cases := map[string]struct {
		a    Assignment
		want bool
	}{
		"a job without roles": {want: true},
		"every role has a flavor in every group": {
			a:    Assignment{Roles: []RoleAssignment{{Role: "launcher", Picked: []string{"cpu-nodes"}}, {Role: "node", Picked: []string{"cpu-nodes", "a100"}}}},
			want: true,
		},
		"one role lacks a flavor in one group": {
			a: Assignment{Roles: []RoleAssignment{{Role: "launcher", Picked: []string{"cpu-nodes"}}, {Role: "node", Picked: []string{"cpu-nodes", ""}}}},
		},
		"a request no group covers": {
			a: Assignment{Roles: []RoleAssignment{{Role: "node", Picked: []string{"a100"}}}, Uncovered: map[string][]corev1.ResourceName{"node": {fixtures.FPGA}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.a.Fits(); got != tc.want {
				t.Errorf("Fits() = %v, want %v", got, tc.want)
			}
		})
	}
}
