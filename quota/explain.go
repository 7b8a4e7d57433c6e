package quota

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// State of a TrainJob in Kueue.
type State string

const (
	StateNotQueued State = "NotQueued"
	StatePending   State = "Pending"
	// StateReserved: quota reserved, admission checks pending.
	StateReserved State = "QuotaReserved"
	StateAdmitted State = "Admitted"
	StateFinished State = "Finished"
)

// Input is everything explain looks at, fetched by the caller.
type Input struct {
	// Job is "namespace/name".
	Job   string
	Roles []podsets.Role
	// LocalQueue named by the job; "" when it has no queue-name label.
	LocalQueue string
	// Queue is nil when the LocalQueue or its ClusterQueue does not exist.
	Queue *Queue
	// Workload is nil for a job not queued yet or a manifest not created.
	Workload *kueue.Workload
	// Position in the queues from Kueue's visibility API, if it answered.
	Position *Position
	// PositionNote says why the position is unknown.
	PositionNote string
}

// Position of a pending Workload in its queues (0 is the head).
type Position struct {
	InLocalQueue   int32 `json:"inLocalQueue"`
	InClusterQueue int32 `json:"inClusterQueue"`
}

// Explanation answers a batch admin's questions about one TrainJob.
type Explanation struct {
	Job          string            `json:"trainJob"`
	LocalQueue   string            `json:"localQueue,omitempty"`
	ClusterQueue string            `json:"clusterQueue,omitempty"`
	Cohort       string            `json:"cohort,omitempty"`
	State        State             `json:"state"`
	Roles        []RoleExplanation `json:"roles"`
	Quota        []QuotaLine       `json:"quota,omitempty"`
	Position     *Position         `json:"position,omitempty"`
	PositionNote string            `json:"positionNote,omitempty"`
	// KueueSays is Kueue's own message on the Workload, when pending.
	KueueSays string `json:"kueueSays,omitempty"`
	Verdict   string `json:"verdict"`
}

// RoleExplanation is one role's demand and where it goes.
type RoleExplanation struct {
	Name   string              `json:"name"`
	Count  int32               `json:"count"`
	PerPod corev1.ResourceList `json:"perPod"`
	Total  corev1.ResourceList `json:"total"`
	// Flavors assigned at admission, per resource.
	Flavors map[corev1.ResourceName]string `json:"flavors,omitempty"`
	// Candidates considered now, for a job not admitted.
	Candidates []Candidate `json:"candidates,omitempty"`
}

// QuotaLine is one flavor's resource in the ClusterQueue.
type QuotaLine struct {
	Flavor         string              `json:"flavor"`
	Resource       corev1.ResourceName `json:"resource"`
	Nominal        resource.Quantity   `json:"nominal"`
	BorrowingLimit *resource.Quantity  `json:"borrowingLimit,omitempty"`
	Used           resource.Quantity   `json:"used"`
	CohortLends    resource.Quantity   `json:"cohortLends"`
}

// Explain computes the explanation: demand per role, the ClusterQueue's
// quota, and a one-line verdict.
func Explain(in Input) Explanation {
	ex := Explanation{Job: in.Job, LocalQueue: in.LocalQueue, Position: in.Position, PositionNote: in.PositionNote}
	usage := Usage(in.Roles)
	for _, u := range usage {
		ex.Roles = append(ex.Roles, RoleExplanation{Name: u.Name, Count: u.Count, PerPod: u.PerPod, Total: u.Total})
	}
	if in.Queue != nil {
		cq := in.Queue.ClusterQueue
		ex.ClusterQueue, ex.Cohort = cq.Name, string(cq.Spec.CohortName)
		ex.Quota = quotaLines(in.Queue)
	}
	wl := in.Workload
	switch {
	case in.LocalQueue == "":
		ex.State = StateNotQueued
		ex.Verdict = "not queued: the job has no kueue.x-k8s.io/queue-name label, so Kueue does not manage it"
		return ex
	case wl != nil && apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished):
		ex.State = StateFinished
		c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished)
		ex.Verdict = fmt.Sprintf("finished (%s): %s", c.Reason, c.Message)
		return ex
	case wl != nil && wl.Status.Admission != nil:
		ex.ClusterQueue = string(wl.Status.Admission.ClusterQueue)
		assigned(&ex, wl.Status.Admission)
		where := flavorsText(ex.Roles)
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			ex.State = StateAdmitted
			ex.Verdict = fmt.Sprintf("admitted by ClusterQueue %s: %s", ex.ClusterQueue, where)
			if wl.Status.ClusterName != nil {
				ex.Verdict += fmt.Sprintf("; runs on worker cluster %s", *wl.Status.ClusterName)
			}
			return ex
		}
		ex.State = StateReserved
		ex.Verdict = fmt.Sprintf("quota reserved in ClusterQueue %s (%s); waiting for admission checks: %s", ex.ClusterQueue, where, checksText(wl.Status.AdmissionChecks))
		return ex
	}
	ex.State = StatePending
	if wl != nil {
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil && c.Status != "True" && c.Message != "" {
			ex.KueueSays = c.Message
		}
	}
	if in.Queue == nil {
		ex.Verdict = fmt.Sprintf("waiting for LocalQueue %s: it or its ClusterQueue does not exist", in.LocalQueue)
		return ex
	}
	ex.Verdict = pendingVerdict(&ex, in)
	return ex
}

func assigned(ex *Explanation, adm *kueue.Admission) {
	for i := range ex.Roles {
		for _, psa := range adm.PodSetAssignments {
			if string(psa.Name) != ex.Roles[i].Name {
				continue
			}
			ex.Roles[i].Flavors = map[corev1.ResourceName]string{}
			for r, f := range psa.Flavors {
				ex.Roles[i].Flavors[r] = string(f)
			}
		}
	}
}

func pendingVerdict(ex *Explanation, in Input) string {
	cq := in.Queue.ClusterQueue
	a := Assign(in.Roles, in.Queue)
	for i := range a.Roles {
		ex.Roles[i].Candidates = a.Roles[i].Candidates
	}
	for _, role := range sortedRoleNames(a.Uncovered) {
		return fmt.Sprintf("never admitted: role %s requests %s, which ClusterQueue %s has no quota for", role, resourcesText(a.Uncovered[role]), cq.Name)
	}
	if a.Fits() {
		var borrowed []string
		for i := range a.Roles {
			for _, c := range a.Roles[i].Candidates {
				if c.Fit == Borrows && slices.Contains(a.Roles[i].Picked, c.Flavor) {
					borrowed = append(borrowed, fmt.Sprintf("%s of flavor %s", listText(c.Borrowed), c.Flavor))
				}
			}
		}
		pos := ""
		if in.Position != nil {
			pos = fmt.Sprintf(" (position %d in LocalQueue %s)", in.Position.InLocalQueue, in.LocalQueue)
		}
		if len(borrowed) > 0 {
			return fmt.Sprintf("fits now by borrowing %s from cohort %s; Kueue admits it when it reaches the head of the queue%s", strings.Join(borrowed, ", "), cq.Spec.CohortName, pos)
		}
		return fmt.Sprintf("fits now in ClusterQueue %s (%s); Kueue admits it when it reaches the head of the queue%s", cq.Name, pickedText(a), pos)
	}
	// The first role that does not fit, in its least short flavor.
	for i := range a.Roles {
		if !slices.Contains(a.Roles[i].Picked, "") {
			continue
		}
		best := bestShort(a.Roles[i].Candidates)
		if best == nil {
			why := "it has no flavors for the role's resources"
			if len(a.Roles[i].Candidates) > 0 {
				why = a.Roles[i].Candidates[0].Why
			}
			return fmt.Sprintf("no flavor of ClusterQueue %s can host role %s: %s", cq.Name, a.Roles[i].Role, why)
		}
		r := sortedResources(best.Short)[0]
		ledger := NewLedger(in.Queue)
		free := ledger.Free(best.Flavor, r)
		if free.Sign() < 0 {
			free = resource.Quantity{}
		}
		nominal := ledger.nominal[best.Flavor][r]
		short := best.Short[r]
		msg := fmt.Sprintf("pending: short of %s %s in flavor %s — role %s needs %s, ClusterQueue %s has %s free of %s nominal",
			short.String(), r, best.Flavor, a.Roles[i].Role, qty(ex.Roles[i].Total, r), cq.Name, free.String(), nominal.String())
		if cq.Spec.CohortName != "" {
			lend := ledger.Lend(best.Flavor, r)
			msg += fmt.Sprintf(" and cohort %s lends %s", cq.Spec.CohortName, lend.String())
		}
		if never := neverFits(in, a.Roles[i].Role); never != "" {
			msg += "; " + never
		}
		return msg
	}
	return "pending"
}

// neverFits tells whether a role could not fit even in an idle queue and
// cohort: then waiting does not help.
func neverFits(in Input, role string) string {
	idle := in.Queue.ClusterQueue.DeepCopy()
	idle.Status.FlavorsReservation = nil
	q := &Queue{ClusterQueue: idle, Flavors: in.Queue.Flavors, CohortLends: in.Queue.CohortCapacity}
	a := Assign(in.Roles, q)
	for _, r := range a.Roles {
		if r.Role == role && slices.Contains(r.Picked, "") {
			return "it does not fit even when the queue and its cohort are idle: shrink the job or raise the quota"
		}
	}
	return ""
}

func bestShort(cands []Candidate) *Candidate {
	var best *Candidate
	for i := range cands {
		c := &cands[i]
		if c.Fit != NoFit {
			continue
		}
		if best == nil || lessShort(c, best) {
			best = c
		}
	}
	return best
}

func lessShort(a, b *Candidate) bool {
	if len(a.Short) != len(b.Short) {
		return len(a.Short) < len(b.Short)
	}
	ra, rb := sortedResources(a.Short)[0], sortedResources(b.Short)[0]
	if ra != rb {
		return false
	}
	qa, qb := a.Short[ra], b.Short[rb]
	return qa.Cmp(qb) < 0
}

func quotaLines(q *Queue) []QuotaLine {
	used := usageOf(q.ClusterQueue.Status.FlavorsReservation)
	var out []QuotaLine
	for _, rg := range q.ClusterQueue.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			for _, r := range fq.Resources {
				l := QuotaLine{Flavor: string(fq.Name), Resource: r.Name, Nominal: r.NominalQuota, Used: used[string(fq.Name)][r.Name]}
				if r.BorrowingLimit != nil {
					l.BorrowingLimit = ptrTo(r.BorrowingLimit.DeepCopy())
				}
				if q.ClusterQueue.Spec.CohortName != "" {
					l.CohortLends = q.CohortLends[string(fq.Name)][r.Name]
				}
				out = append(out, l)
			}
		}
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

func qty(l corev1.ResourceList, r corev1.ResourceName) string {
	v := l[r]
	return v.String()
}

func listText(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, r := range sortedResources(l) {
		v := l[r]
		parts = append(parts, fmt.Sprintf("%s %s", v.String(), r))
	}
	return strings.Join(parts, ", ")
}

func resourcesText(rs []corev1.ResourceName) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = string(r)
	}
	return strings.Join(parts, ", ")
}

func pickedText(a Assignment) string {
	parts := make([]string, 0, len(a.Roles))
	for _, r := range a.Roles {
		parts = append(parts, fmt.Sprintf("%s→%s", r.Role, strings.Join(r.Picked, "+")))
	}
	return strings.Join(parts, ", ")
}

func flavorsText(roles []RoleExplanation) string {
	parts := make([]string, 0, len(roles))
	for _, r := range roles {
		set := map[string]string{}
		for _, f := range r.Flavors {
			set[f] = f
		}
		parts = append(parts, fmt.Sprintf("%s→%s", r.Name, strings.Join(sortedKeys(set), "+")))
	}
	return strings.Join(parts, ", ")
}

func checksText(checks []kueue.AdmissionCheckState) string {
	parts := make([]string, 0, len(checks))
	for _, c := range checks {
		parts = append(parts, fmt.Sprintf("%s=%s", c.Name, c.State))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func sortedRoleNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// WriteText prints the explanation for people.
func (ex *Explanation) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TrainJob:\t%s\n", ex.Job)
	queue := ex.LocalQueue
	if ex.ClusterQueue != "" {
		queue += " → ClusterQueue " + ex.ClusterQueue
	}
	if ex.Cohort != "" {
		queue += " (cohort " + ex.Cohort + ")"
	}
	fmt.Fprintf(tw, "Queue:\t%s\n", cmpOr(queue, "(none)"))
	fmt.Fprintf(tw, "State:\t%s\n", ex.State)
	switch {
	case ex.Position != nil:
		fmt.Fprintf(tw, "Position:\t%d in LocalQueue, %d in ClusterQueue\n", ex.Position.InLocalQueue, ex.Position.InClusterQueue)
	case ex.PositionNote != "" && (ex.State == StatePending):
		fmt.Fprintf(tw, "Position:\tunknown (%s)\n", ex.PositionNote)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "ROLE\tPODS\tPER POD\tTOTAL\tFLAVOR")
	for _, r := range ex.Roles {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Name, r.Count, compact(r.PerPod), compact(r.Total), roleFlavorText(&r))
	}
	if len(ex.Quota) > 0 {
		fmt.Fprintln(tw)
		fmt.Fprintf(tw, "QUOTA OF %s\tRESOURCE\tNOMINAL\tBORROWING LIMIT\tUSED\tCOHORT LENDS\n", ex.ClusterQueue)
		for _, l := range ex.Quota {
			limit := "-"
			if l.BorrowingLimit != nil {
				limit = l.BorrowingLimit.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", l.Flavor, l.Resource, l.Nominal.String(), limit, l.Used.String(), l.CohortLends.String())
		}
	}
	fmt.Fprintln(tw)
	if ex.KueueSays != "" {
		fmt.Fprintf(tw, "Kueue says:\t%s\n", ex.KueueSays)
	}
	fmt.Fprintf(tw, "Verdict:\t%s\n", ex.Verdict)
	return tw.Flush()
}

func roleFlavorText(r *RoleExplanation) string {
	if len(r.Flavors) > 0 {
		set := map[string]string{}
		for _, f := range r.Flavors {
			set[f] = f
		}
		return strings.Join(sortedKeys(set), "+")
	}
	parts := make([]string, 0, len(r.Candidates))
	for _, c := range r.Candidates {
		switch c.Fit {
		case Fits:
			parts = append(parts, c.Flavor+" (fits)")
		case Borrows:
			parts = append(parts, c.Flavor+" (borrows "+listText(c.Borrowed)+")")
		case NoFit:
			parts = append(parts, c.Flavor+" (short "+listText(c.Short)+")")
		case Ineligible:
			parts = append(parts, c.Flavor+" (ineligible)")
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// compact prints a resource list as "cpu=1 nvidia.com/gpu=8", without
// zero entries.
func compact(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, r := range sortedResources(l) {
		v := l[r]
		if v.IsZero() {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s", r, v.String()))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
