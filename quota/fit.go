package quota

import (
	"slices"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// Fit is how a role's pods fit in one flavor of a ClusterQueue now.
type Fit string

const (
	// Fits in the ClusterQueue's unused nominal quota.
	Fits Fit = "Fits"
	// Borrows: fits only with quota borrowed from the cohort.
	Borrows Fit = "Borrows"
	// NoFit: not even with everything the cohort could lend.
	NoFit Fit = "NoFit"
	// Ineligible: the pods can't run on the flavor's nodes (their
	// nodeSelector contradicts its node labels, or they don't tolerate its
	// taints).
	Ineligible Fit = "Ineligible"
)

// Candidate is one flavor considered for a role.
type Candidate struct {
	Flavor string `json:"flavor"`
	Fit    Fit    `json:"fit"`
	// Short is what is missing, per resource, even borrowing all the
	// cohort lends (NoFit).
	Short corev1.ResourceList `json:"short,omitempty"`
	// Borrowed is what the role would borrow from the cohort (Borrows).
	Borrowed corev1.ResourceList `json:"borrowed,omitempty"`
	// Why a flavor is Ineligible.
	Why string `json:"why,omitempty"`
}

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

// Ledger is quota left per flavor and resource while roles are assigned.
type Ledger struct {
	free    map[string]corev1.ResourceList // nominal - used (may be negative)
	borrow  map[string]corev1.ResourceList // what borrowing can still add
	nominal map[string]corev1.ResourceList
	limited map[string]map[corev1.ResourceName]bool // a borrowingLimit applies
}

// NewLedger starts from the ClusterQueue's nominal quota minus its
// reservations, and what the cohort lends capped by borrowingLimits.
func NewLedger(q *Queue) *Ledger {
	l := &Ledger{free: map[string]corev1.ResourceList{}, borrow: map[string]corev1.ResourceList{}, nominal: map[string]corev1.ResourceList{}, limited: map[string]map[corev1.ResourceName]bool{}}
	used := usageOf(q.ClusterQueue.Status.FlavorsReservation)
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

func usageOf(usage []kueue.FlavorUsage) map[string]map[corev1.ResourceName]resource.Quantity {
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
	for _, r := range sortedResources(need) {
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

// eligible: can the role's pods run on the flavor's nodes at all?
func eligible(tmpl *corev1.PodSpec, rf *kueue.ResourceFlavor) string {
	if rf == nil {
		return "the ResourceFlavor does not exist"
	}
	for _, k := range sortedKeys(rf.Spec.NodeLabels) {
		if have, ok := tmpl.NodeSelector[k]; ok && have != rf.Spec.NodeLabels[k] {
			return "the pods' nodeSelector " + k + "=" + have + " contradicts the flavor's node label " + k + "=" + rf.Spec.NodeLabels[k]
		}
	}
	for _, taint := range rf.Spec.NodeTaints {
		if !slices.ContainsFunc(tmpl.Tolerations, func(t corev1.Toleration) bool { return t.ToleratesTaint(logr.Discard(), &taint, false) }) &&
			!slices.ContainsFunc(rf.Spec.Tolerations, func(t corev1.Toleration) bool { return t.ToleratesTaint(logr.Discard(), &taint, false) }) {
			return "the pods don't tolerate the flavor's node taint " + taint.ToString()
		}
	}
	return ""
}

// Assignment is where each role would go, in role order.
type Assignment struct {
	Roles []RoleAssignment
	// Uncovered lists resources a role requests that no resource group of
	// the ClusterQueue covers: such a job is never admitted.
	Uncovered map[string][]corev1.ResourceName
}

// RoleAssignment is the search for one role: every flavor considered, and
// the one picked per resource group ("" when none fits).
type RoleAssignment struct {
	Role       string
	Candidates []Candidate
	Picked     []string
}

// Fits reports whether every role has a flavor in every group.
func (a *Assignment) Fits() bool {
	if len(a.Uncovered) > 0 {
		return false
	}
	for _, r := range a.Roles {
		if slices.Contains(r.Picked, "") {
			return false
		}
	}
	return true
}

// Assign is a what-if of Kueue's flavor assignment for a job's roles
// against the queue as it is now: per role and resource group, flavors in
// the ClusterQueue's order, the first that fits, or that fits by borrowing
// when the ClusterQueue's flavorFungibility.whenCanBorrow is MayStopSearch
// (Kueue's default); otherwise the first borrowing one. Roles booked
// earlier use up quota for later ones, as one Workload's PodSets do. It
// does not model preemption, fair sharing or topology.
func Assign(roles []podsets.Role, q *Queue) Assignment {
	l := NewLedger(q)
	usage := Usage(roles)
	stopOnBorrow := true
	if ff := q.ClusterQueue.Spec.FlavorFungibility; ff != nil && ff.WhenCanBorrow == kueue.TryNextFlavor {
		stopOnBorrow = false
	}
	out := Assignment{}
	for i := range roles {
		ra := RoleAssignment{Role: roles[i].Name}
		covered := map[corev1.ResourceName]bool{}
		for _, rg := range q.ClusterQueue.Spec.ResourceGroups {
			need := corev1.ResourceList{}
			for _, r := range rg.CoveredResources {
				covered[r] = true
				if v, ok := usage[i].Total[r]; ok && !v.IsZero() {
					need[r] = v
				}
			}
			if len(need) == 0 {
				continue
			}
			picked, borrowing := "", ""
			for _, fq := range rg.Flavors {
				f := string(fq.Name)
				if why := eligible(&roles[i].Template.Spec, q.Flavors[f]); why != "" {
					ra.Candidates = append(ra.Candidates, Candidate{Flavor: f, Fit: Ineligible, Why: why})
					continue
				}
				c := l.fit(f, need)
				ra.Candidates = append(ra.Candidates, c)
				if c.Fit == Fits || (c.Fit == Borrows && stopOnBorrow) {
					picked = f
					break
				}
				if c.Fit == Borrows && borrowing == "" {
					borrowing = f
				}
			}
			if picked == "" {
				picked = borrowing
			}
			if picked != "" {
				l.take(picked, need)
			}
			ra.Picked = append(ra.Picked, picked)
		}
		for _, r := range sortedResources(usage[i].Total) {
			if v := usage[i].Total[r]; !covered[r] && !v.IsZero() {
				if out.Uncovered == nil {
					out.Uncovered = map[string][]corev1.ResourceName{}
				}
				out.Uncovered[roles[i].Name] = append(out.Uncovered[roles[i].Name], r)
			}
		}
		out.Roles = append(out.Roles, ra)
	}
	return out
}

// Lendable is what one ClusterQueue of a cohort lends now, per flavor and
// resource: its unused nominal quota, capped by its lendingLimit.
func Lendable(cq *kueue.ClusterQueue) map[string]corev1.ResourceList {
	used := usageOf(cq.Status.FlavorsReservation)
	out := map[string]corev1.ResourceList{}
	for _, rg := range cq.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			f := string(fq.Name)
			for _, r := range fq.Resources {
				free := r.NominalQuota.DeepCopy()
				if u, ok := used[f][r.Name]; ok {
					free.Sub(u)
				}
				if free.Sign() <= 0 {
					continue
				}
				if r.LendingLimit != nil && r.LendingLimit.Cmp(free) < 0 {
					free = r.LendingLimit.DeepCopy()
				}
				if out[f] == nil {
					out[f] = corev1.ResourceList{}
				}
				out[f][r.Name] = free
			}
		}
	}
	return out
}

// CohortLends sums what the other members of a cohort lend now, and what
// they would lend were they idle.
func CohortLends(members []*kueue.ClusterQueue) (now, idle map[string]corev1.ResourceList) {
	now, idle = map[string]corev1.ResourceList{}, map[string]corev1.ResourceList{}
	for _, cq := range members {
		for f, list := range Lendable(cq) {
			now[f] = Add(now[f], list)
		}
		empty := cq.DeepCopy()
		empty.Status.FlavorsReservation = nil
		for f, list := range Lendable(empty) {
			idle[f] = Add(idle[f], list)
		}
	}
	return now, idle
}

func sortedResources(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for r := range l {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
