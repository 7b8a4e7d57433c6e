package forecast

import (
	"maps"
	"slices"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
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

// eligible: can the role's pods run on the flavor's nodes at all?
func eligible(tmpl *corev1.PodSpec, rf *kueue.ResourceFlavor) string {
	if rf == nil {
		return "the ResourceFlavor does not exist"
	}
	for _, k := range slices.Sorted(maps.Keys(rf.Spec.NodeLabels)) {
		if have, ok := tmpl.NodeSelector[k]; ok && have != rf.Spec.NodeLabels[k] {
			return "the pods' nodeSelector " + k + "=" + have + " contradicts the flavor's node label " + k + "=" + rf.Spec.NodeLabels[k]
		}
	}
	for _, taint := range rf.Spec.NodeTaints {
		// Kueue, like the scheduler's filter, weighs only the taints that
		// keep pods off: a PreferNoSchedule taint is a preference.
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
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
	a, _ := assignOn(NewLedger(q), roles, q)
	return a
}

// assignOn is Assign against the quota l has left, which it books; booked
// is what it took, per flavor.
func assignOn(l *Ledger, roles []podsets.Role, q *Queue) (out Assignment, booked map[string]corev1.ResourceList) {
	return assignUsage(l, roles, quota.Usage(roles), q)
}

// assignUsage is assignOn with the roles' usage already computed (a
// forecast tries one shape many times).
func assignUsage(l *Ledger, roles []podsets.Role, usage []quota.RoleUsage, q *Queue) (out Assignment, booked map[string]corev1.ResourceList) {
	stopOnBorrow := true
	if ff := q.ClusterQueue.Spec.FlavorFungibility; ff != nil && ff.WhenCanBorrow == kueue.TryNextFlavor {
		stopOnBorrow = false
	}
	out = Assignment{}
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
				if booked == nil {
					booked = map[string]corev1.ResourceList{}
				}
				booked[picked] = quota.Add(booked[picked], need)
			}
			ra.Picked = append(ra.Picked, picked)
		}
		for _, r := range slices.Sorted(maps.Keys(usage[i].Total)) {
			if v := usage[i].Total[r]; !covered[r] && !v.IsZero() {
				if out.Uncovered == nil {
					out.Uncovered = map[string][]corev1.ResourceName{}
				}
				out.Uncovered[roles[i].Name] = append(out.Uncovered[roles[i].Name], r)
			}
		}
		out.Roles = append(out.Roles, ra)
	}
	return out, booked
}
