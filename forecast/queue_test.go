package forecast

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestNewLedgerStartsFromUnusedQuotaAndWhatTheCohortLends(t *testing.T) {
	a100 := func(gpus fixtures.ResourceQuota) *kueue.ClusterQueue {
		gpus.Name = fixtures.GPU
		return fixtures.GPUQueue("cq", "research", fixtures.FlavorQuotas("a100", gpus))
	}
	lends := map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "6")}
	cases := map[string]struct {
		cq          *kueue.ClusterQueue
		cohortLends map[string]corev1.ResourceList
		flavor      string
		wantFree    string
		wantLend    string
	}{
		"an idle queue has its nominal quota free": {
			cq: a100(fixtures.ResourceQuota{Nominal: "8"}), flavor: "a100", wantFree: "8", wantLend: "0",
		},
		"reservations use the nominal quota up": {
			cq: fixtures.Reserving(a100(fixtures.ResourceQuota{Nominal: "8"}), "a100", fixtures.Requests(t, "nvidia.com/gpu", "6")), flavor: "a100", wantFree: "2", wantLend: "0",
		},
		"a queue using more than its nominal quota has less than nothing free": {
			cq: fixtures.Reserving(a100(fixtures.ResourceQuota{Nominal: "8"}), "a100", fixtures.Requests(t, "nvidia.com/gpu", "12")), flavor: "a100", wantFree: "-4", wantLend: "0",
		},
		"reservations of another flavor don't count": {
			cq: fixtures.Reserving(a100(fixtures.ResourceQuota{Nominal: "8"}), "h100", fixtures.Requests(t, "nvidia.com/gpu", "6")), flavor: "a100", wantFree: "8", wantLend: "0",
		},
		"what the queue borrows already counts against its borrowing limit": {
			cq:          fixtures.Reserving(a100(fixtures.ResourceQuota{Nominal: "8", BorrowingLimit: "4"}), "a100", fixtures.Requests(t, "nvidia.com/gpu", "12")),
			cohortLends: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "100")}, flavor: "a100", wantFree: "-4", wantLend: "0",
		},
		"what the queue borrows already counts against what the cohort has free": {
			cq:          fixtures.Reserving(a100(fixtures.ResourceQuota{Nominal: "8"}), "a100", fixtures.Requests(t, "nvidia.com/gpu", "12")),
			cohortLends: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "8")}, flavor: "a100", wantFree: "-4", wantLend: "4",
		},
		"in a cohort, borrowing can add what the others lend": {
			cq: a100(fixtures.ResourceQuota{Nominal: "8"}), cohortLends: lends, flavor: "a100", wantFree: "8", wantLend: "6",
		},
		"the borrowing limit caps what borrowing can add": {
			cq: a100(fixtures.ResourceQuota{Nominal: "8", BorrowingLimit: "2"}), cohortLends: lends, flavor: "a100", wantFree: "8", wantLend: "2",
		},
		"a borrowing limit above what the cohort lends changes nothing": {
			cq: a100(fixtures.ResourceQuota{Nominal: "8", BorrowingLimit: "20"}), cohortLends: lends, flavor: "a100", wantFree: "8", wantLend: "6",
		},
		"a borrowing limit of zero forbids borrowing": {
			cq: a100(fixtures.ResourceQuota{Nominal: "8", BorrowingLimit: "0"}), cohortLends: lends, flavor: "a100", wantFree: "8", wantLend: "0",
		},
		"a flavor nobody in the cohort lends": {
			cq: a100(fixtures.ResourceQuota{Nominal: "8"}), cohortLends: map[string]corev1.ResourceList{"h100": fixtures.Requests(t, "nvidia.com/gpu", "6")}, flavor: "a100", wantFree: "8", wantLend: "0",
		},
		"a flavor the queue does not have": {
			cq: a100(fixtures.ResourceQuota{Nominal: "8"}), cohortLends: lends, flavor: "h100", wantFree: "0", wantLend: "0",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := NewLedger(&Queue{ClusterQueue: tc.cq, CohortLends: tc.cohortLends})
			free, lend := l.Free(tc.flavor, fixtures.GPU), l.Lend(tc.flavor, fixtures.GPU)
			if free.String() != tc.wantFree || lend.String() != tc.wantLend {
				t.Errorf("free %s, lend %s; want free %s, lend %s", free.String(), lend.String(), tc.wantFree, tc.wantLend)
			}
		})
	}
}

// What the cohort lends only counts for a queue that is in one, even when
// the caller passes lends along.
func TestNewLedgerOutsideACohortBorrowsNothing(t *testing.T) {
	cq := fixtures.GPUQueue("cq", "", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"}))
	l := NewLedger(&Queue{ClusterQueue: cq, CohortLends: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "6")}})
	if lend := l.Lend("a100", fixtures.GPU); !lend.IsZero() {
		t.Errorf("a queue in no cohort can borrow %s, want nothing", lend.String())
	}
}

// ledgerOfA100 is a queue with 32 CPUs and 8 GPUs of flavor a100, 4 GPUs
// reserved, in a cohort that lends it 6 GPUs and no CPU.
func ledgerOfA100(t *testing.T) *Ledger {
	t.Helper()
	cq := fixtures.ClusterQueueOf("cq", "research", fixtures.ResourceGroup([]corev1.ResourceName{corev1.ResourceCPU, fixtures.GPU, fixtures.FPGA},
		fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: corev1.ResourceCPU, Nominal: "32"}, fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"})))
	fixtures.Reserving(cq, "a100", fixtures.Requests(t, "nvidia.com/gpu", "4"))
	return NewLedger(&Queue{ClusterQueue: cq, CohortLends: map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "6")}})
}

func TestLedgerFit(t *testing.T) {
	cases := map[string]struct {
		flavor string
		need   corev1.ResourceList
		want   Candidate
	}{
		"within the free quota": {
			flavor: "a100", need: fixtures.Requests(t, "cpu", "8", "nvidia.com/gpu", "3"),
			want: Candidate{Flavor: "a100", Fit: Fits},
		},
		"exactly the free quota": {
			flavor: "a100", need: fixtures.Requests(t, "cpu", "32", "nvidia.com/gpu", "4"),
			want: Candidate{Flavor: "a100", Fit: Fits},
		},
		"beyond the free quota, only the excess is borrowed": {
			flavor: "a100", need: fixtures.Requests(t, "nvidia.com/gpu", "7"),
			want: Candidate{Flavor: "a100", Fit: Borrows, Borrowed: fixtures.Requests(t, "nvidia.com/gpu", "3")},
		},
		"borrowing all the cohort lends": {
			flavor: "a100", need: fixtures.Requests(t, "nvidia.com/gpu", "10"),
			want: Candidate{Flavor: "a100", Fit: Borrows, Borrowed: fixtures.Requests(t, "nvidia.com/gpu", "6")},
		},
		"short of what even borrowing gives": {
			flavor: "a100", need: fixtures.Requests(t, "nvidia.com/gpu", "12"),
			want: Candidate{Flavor: "a100", Fit: NoFit, Short: fixtures.Requests(t, "nvidia.com/gpu", "2")},
		},
		// A NoFit flavor borrows nothing: the role does not go there.
		"short of one resource while borrowing another": {
			flavor: "a100", need: fixtures.Requests(t, "cpu", "40", "nvidia.com/gpu", "7"),
			want: Candidate{Flavor: "a100", Fit: NoFit, Short: fixtures.Requests(t, "cpu", "8")},
		},
		"short of every resource": {
			flavor: "a100", need: fixtures.Requests(t, "cpu", "33", "nvidia.com/gpu", "11"),
			want: Candidate{Flavor: "a100", Fit: NoFit, Short: fixtures.Requests(t, "cpu", "1", "nvidia.com/gpu", "1")},
		},
		"a zero request needs no quota": {
			flavor: "a100", need: fixtures.Requests(t, "example.com/fpga", "0"),
			want: Candidate{Flavor: "a100", Fit: Fits},
		},
		"a covered resource the flavor has no quota of": {
			flavor: "a100", need: fixtures.Requests(t, "example.com/fpga", "1"),
			want: Candidate{Flavor: "a100", Fit: NoFit, Short: fixtures.Requests(t, "example.com/fpga", "1")},
		},
		"a flavor the queue does not have": {
			flavor: "h100", need: fixtures.Requests(t, "nvidia.com/gpu", "1"),
			want: Candidate{Flavor: "h100", Fit: NoFit, Short: fixtures.Requests(t, "nvidia.com/gpu", "1")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := ledgerOfA100(t)
			if diff := cmp.Diff(tc.want, l.fit(tc.flavor, tc.need)); diff != "" {
				t.Errorf("candidate (-want +got):\n%s", diff)
			}
			// fit only looks.
			if free, lend := l.Free("a100", fixtures.GPU), l.Lend("a100", fixtures.GPU); free.String() != "4" || lend.String() != "6" {
				t.Errorf("after fit: free %s, lend %s; want 4 and 6 untouched", free.String(), lend.String())
			}
		})
	}
}

// take books roles one after the other: the free quota first, then what
// the cohort lends.
func TestLedgerTakeUsesFreeQuotaThenBorrowing(t *testing.T) {
	l := ledgerOfA100(t)
	steps := []struct {
		take               string
		wantFree, wantLend string
		// wantNext is how 2 more GPUs would fit after this step.
		wantNext Fit
	}{
		{take: "3", wantFree: "1", wantLend: "6", wantNext: Borrows},
		{take: "2", wantFree: "-1", wantLend: "5", wantNext: Borrows},
		{take: "4", wantFree: "-5", wantLend: "1", wantNext: NoFit},
		{take: "1", wantFree: "-6", wantLend: "0", wantNext: NoFit},
	}
	for i, s := range steps {
		l.take("a100", fixtures.Requests(t, "nvidia.com/gpu", s.take))
		free, lend := l.Free("a100", fixtures.GPU), l.Lend("a100", fixtures.GPU)
		next := l.fit("a100", fixtures.Requests(t, "nvidia.com/gpu", "2")).Fit
		if free.String() != s.wantFree || lend.String() != s.wantLend || next != s.wantNext {
			t.Errorf("step %d, took %s GPUs: free %s, lend %s, 2 more %s; want free %s, lend %s, %s",
				i, s.take, free.String(), lend.String(), next, s.wantFree, s.wantLend, s.wantNext)
		}
	}
	// The CPUs were never taken.
	if cpu := l.Free("a100", corev1.ResourceCPU); cpu.String() != "32" {
		t.Errorf("free CPUs %s, want 32", cpu.String())
	}
}

// Free and Lend hand out copies: a caller's arithmetic does not change the
// ledger.
func TestLedgerFreeAndLendAreCopies(t *testing.T) {
	l := ledgerOfA100(t)
	free, lend := l.Free("a100", fixtures.GPU), l.Lend("a100", fixtures.GPU)
	free.Sub(free)
	lend.Add(lend)
	if free, lend := l.Free("a100", fixtures.GPU), l.Lend("a100", fixtures.GPU); free.String() != "4" || lend.String() != "6" {
		t.Errorf("free %s, lend %s after the caller's arithmetic; want 4 and 6", free.String(), lend.String())
	}
}

func TestUsageOfReadsReservationsPerFlavor(t *testing.T) {
	got := Used([]kueue.FlavorUsage{
		{Name: "a100", Resources: []kueue.ResourceUsage{{Name: fixtures.GPU, Total: resource.MustParse("4")}, {Name: corev1.ResourceCPU, Total: resource.MustParse("10")}}},
		{Name: "h100"},
	})
	want := map[string]corev1.ResourceList{"a100": fixtures.Requests(t, "nvidia.com/gpu", "4", "cpu", "10"), "h100": {}}
	for f := range want {
		if diff := cmp.Diff(want[f], corev1.ResourceList(got[f])); diff != "" {
			t.Errorf("flavor %s (-want +got):\n%s", f, diff)
		}
	}
	if len(got) != len(want) {
		t.Errorf("flavors %v, want a100 and h100", got)
	}
}
