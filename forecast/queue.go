package forecast

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Queue is what the fit computation knows about a ClusterQueue: its spec,
// what its admitted workloads use, the flavors it names and what the
// other queues of its cohort could lend now.
type Queue struct {
	ClusterQueue *kueue.ClusterQueue
	Flavors      map[string]*kueue.ResourceFlavor
	// CohortLends is, per flavor and resource, the unused quota the other
	// ClusterQueues of the cohort lend now; see Lendable.
	CohortLends map[string]corev1.ResourceList
	// CohortCapacity is what they would lend were they idle.
	CohortCapacity map[string]corev1.ResourceList
}

// ledger is quota left per flavor and resource while roles are assigned.
type Ledger struct {
	free    map[string]corev1.ResourceList // nominal - used (may be negative)
	borrow  map[string]corev1.ResourceList // what borrowing can still add
	nominal map[string]corev1.ResourceList
	limited map[string]map[corev1.ResourceName]bool // a borrowingLimit applies
}

// newLedger starts from the ClusterQueue's nominal quota minus its
// reservations, and what the cohort lends capped by borrowingLimits.
func NewLedger(q *Queue) *Ledger {
	l := &Ledger{free: map[string]corev1.ResourceList{}, borrow: map[string]corev1.ResourceList{}, nominal: map[string]corev1.ResourceList{}, limited: map[string]map[corev1.ResourceName]bool{}}
	used := Used(q.ClusterQueue.Status.FlavorsReservation)
	for _, rg := range q.ClusterQueue.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			f := string(fq.Name)
			l.free[f], l.borrow[f], l.nominal[f], l.limited[f] = corev1.ResourceList{}, corev1.ResourceList{}, corev1.ResourceList{}, map[corev1.ResourceName]bool{}
			for _, r := range fq.Resources {
				free := r.NominalQuota.DeepCopy()
				if u, ok := used[f][r.Name]; ok {
					free.Sub(u)
				}
				l.free[f][r.Name] = free
				l.nominal[f][r.Name] = r.NominalQuota.DeepCopy()
				lend := q.CohortLends[f][r.Name]
				if q.ClusterQueue.Spec.CohortName == "" {
					lend = resource.Quantity{}
				}
				if r.BorrowingLimit != nil {
					l.limited[f][r.Name] = true
					if r.BorrowingLimit.Cmp(lend) < 0 {
						lend = r.BorrowingLimit.DeepCopy()
					}
				}
				// What the queue borrows already counts against both its
				// borrowing limit and what the cohort has free, as Kueue
				// counts it.
				if free.Sign() < 0 {
					lend.Add(free)
					if lend.Sign() < 0 {
						lend = resource.Quantity{}
					}
				}
				l.borrow[f][r.Name] = lend.DeepCopy()
			}
		}
	}
	return l
}

// Free is the unused nominal quota of a flavor's resource (negative when
// the queue already borrows it).
func (l *Ledger) Free(flavor string, r corev1.ResourceName) resource.Quantity {
	return l.free[flavor][r].DeepCopy()
}

// Lend is what borrowing could still add to a flavor's resource.
func (l *Ledger) Lend(flavor string, r corev1.ResourceName) resource.Quantity {
	return l.borrow[flavor][r].DeepCopy()
}

// Nominal is the ClusterQueue's nominal quota of a flavor's resource.
func (l *Ledger) Nominal(flavor string, r corev1.ResourceName) resource.Quantity {
	return l.nominal[flavor][r].DeepCopy()
}

// Used is what usage reserves, per flavor and resource.
func Used(usage []kueue.FlavorUsage) map[string]map[corev1.ResourceName]resource.Quantity {
	out := map[string]map[corev1.ResourceName]resource.Quantity{}
	for _, fu := range usage {
		out[string(fu.Name)] = map[corev1.ResourceName]resource.Quantity{}
		for _, r := range fu.Resources {
			out[string(fu.Name)][r.Name] = r.Total
		}
	}
	return out
}

// fit checks need against one flavor without taking anything.
func (l *Ledger) fit(flavor string, need corev1.ResourceList) Candidate {
	c := Candidate{Flavor: flavor, Fit: Fits}
	for _, r := range slices.Sorted(maps.Keys(need)) {
		n := need[r]
		if n.IsZero() {
			continue
		}
		free, ok := l.free[flavor][r]
		if !ok {
			free = resource.Quantity{}
		}
		if n.Cmp(free) <= 0 {
			continue
		}
		over := n.DeepCopy()
		if free.Sign() > 0 {
			over.Sub(free)
		}
		lend := l.borrow[flavor][r]
		if over.Cmp(lend) <= 0 {
			if c.Fit == Fits {
				c.Fit = Borrows
			}
			if c.Borrowed == nil {
				c.Borrowed = corev1.ResourceList{}
			}
			c.Borrowed[r] = over
			continue
		}
		c.Fit = NoFit
		short := over.DeepCopy()
		short.Sub(lend)
		if c.Short == nil {
			c.Short = corev1.ResourceList{}
		}
		c.Short[r] = short
	}
	if c.Fit == NoFit {
		c.Borrowed = nil
	}
	return c
}

// take books need on flavor.
func (l *Ledger) take(flavor string, need corev1.ResourceList) {
	for r, n := range need {
		free := l.free[flavor][r]
		if free.Sign() > 0 && n.Cmp(free) > 0 {
			over := n.DeepCopy()
			over.Sub(free)
			lend := l.borrow[flavor][r]
			lend.Sub(over)
			l.borrow[flavor][r] = lend
		} else if free.Sign() <= 0 {
			lend := l.borrow[flavor][r]
			lend.Sub(n)
			l.borrow[flavor][r] = lend
		}
		free.Sub(n)
		if l.free[flavor] == nil {
			l.free[flavor] = corev1.ResourceList{}
		}
		l.free[flavor][r] = free
	}
}

// give returns back to flavor what a job that ends held: to the cohort
// first what the queue borrowed, then to its own quota.
func (l *Ledger) give(flavor string, back corev1.ResourceList) {
	if l.free[flavor] == nil {
		l.free[flavor], l.borrow[flavor] = corev1.ResourceList{}, corev1.ResourceList{}
	}
	for r, n := range back {
		free := l.free[flavor][r]
		if free.Sign() < 0 {
			borrowed := free.DeepCopy()
			borrowed.Neg()
			if n.Cmp(borrowed) < 0 {
				borrowed = n.DeepCopy()
			}
			lend := l.borrow[flavor][r]
			lend.Add(borrowed)
			l.borrow[flavor][r] = lend
		}
		free.Add(n)
		l.free[flavor][r] = free
	}
}

// clone is a copy of l to book a what-if on.
func (l *Ledger) clone() *Ledger {
	c := &Ledger{free: map[string]corev1.ResourceList{}, borrow: map[string]corev1.ResourceList{}, nominal: l.nominal, limited: l.limited}
	for f, rl := range l.free {
		c.free[f] = rl.DeepCopy()
	}
	for f, rl := range l.borrow {
		c.borrow[f] = rl.DeepCopy()
	}
	return c
}
