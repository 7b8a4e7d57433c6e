package explain

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Explain computes the explanation: demand per role, the ClusterQueue's
// quota, and a one-line verdict.
func Explain(in Input) Explanation {
	ex := Explanation{Job: in.Job, LocalQueue: in.LocalQueue, Position: in.Position, PositionNote: in.PositionNote, RuntimeFrom: in.RuntimeFrom}
	usage := quota.Usage(in.Roles)
	for _, u := range usage {
		ex.Roles = append(ex.Roles, roleExplanation{Name: u.Name, Count: u.Count, PerPod: u.PerPod, Total: u.Total})
	}
	addDRA(&ex, in)
	if in.Queue != nil {
		cq := in.Queue.ClusterQueue
		ex.ClusterQueue, ex.Cohort = cq.Name, string(cq.Spec.CohortName)
		ex.Quota = quotaLines(in.Queue)
	}
	wl := in.Workload
	ex.Priority = explainPriority(wl, in.Priority)
	st := lifecycle.Of(lifecycle.Observed{Job: jobOf(in), Workload: wl})
	ex.State = st.State
	verdict, _ := verdictOf(st.State)
	verdict(&ex, in, st)
	return ex
}

// jobOf is the TrainJob in reads; one queued and suspended, of in.Job's
// name, where in has none (a caller that read only its Workload).
func jobOf(in Input) *trainjob.TrainJob {
	if in.TrainJob != nil {
		return in.TrainJob
	}
	j := &trainjob.TrainJob{}
	j.Namespace, j.Name, _ = strings.Cut(in.Job, "/")
	if in.LocalQueue != "" {
		j.Labels = map[string]string{constants.QueueLabel: in.LocalQueue}
	}
	j.Spec.Suspend = ptr.To(true)
	return j
}

// A verdict writes the explanation's verdict for one lifecycle state.
type verdict func(ex *Explanation, in Input, st lifecycle.Status)

// verdictOf is explain's table of the lifecycle's states; ok is false for
// a state it does not map (TestEveryStateHasAVerdict).
func verdictOf(s lifecycle.State) (v verdict, ok bool) {
	switch s {
	case lifecycle.NotQueued:
		return notQueuedVerdict, true
	case lifecycle.Finished, lifecycle.Failed, lifecycle.WaitingForRuntime, lifecycle.HeldByPolicy, lifecycle.HeldOnWorker, lifecycle.Inactive:
		return saidVerdict, true
	case lifecycle.Admitted, lifecycle.Running, lifecycle.Evicted, lifecycle.QuotaReserved:
		return admittedVerdict, true
	case lifecycle.Queued, lifecycle.Requeued:
		return waitingVerdict, true
	}
	return nil, false
}

func notQueuedVerdict(ex *Explanation, _ Input, st lifecycle.Status) {
	ex.Verdict = "not queued: " + st.Message
}

// saidVerdict: the lifecycle's own words say it all (a hold names its
// fix; Trainer's or Kueue's verdict on a finished job).
func saidVerdict(ex *Explanation, _ Input, st lifecycle.Status) { ex.Verdict = st.Message }

// admittedVerdict: where the admission put each role, and what follows.
func admittedVerdict(ex *Explanation, in Input, st lifecycle.Status) {
	wl := in.Workload
	if wl == nil || wl.Status.Admission == nil {
		ex.Verdict = st.Message // started without an admission
		return
	}
	ex.ClusterQueue = st.ClusterQueue
	assigned(ex, wl.Status.Admission)
	where := flavorsText(ex.Roles)
	switch st.State {
	case lifecycle.QuotaReserved:
		ex.Verdict = fmt.Sprintf("quota reserved in ClusterQueue %s (%s); waiting for admission checks: %s", ex.ClusterQueue, where, checksText(wl.Status.AdmissionChecks))
	case lifecycle.Evicted:
		ex.Verdict = fmt.Sprintf("%s (admitted by ClusterQueue %s: %s)", st.Message, ex.ClusterQueue, where)
	default:
		ex.Verdict = fmt.Sprintf("admitted by ClusterQueue %s: %s", ex.ClusterQueue, where)
		if st.State == lifecycle.Admitted {
			ex.Verdict += "; starting"
		}
		if wl.Status.ClusterName != nil {
			ex.Verdict += fmt.Sprintf("; runs on worker cluster %s", *wl.Status.ClusterName)
		}
	}
}

// waitingVerdict: why a job waiting for quota does not fit yet, and what
// Kueue says of it.
func waitingVerdict(ex *Explanation, in Input, _ lifecycle.Status) {
	if wl := in.Workload; wl != nil {
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil && c.Status != "True" && c.Message != "" {
			ex.KueueSays = c.Message
		}
		ex.PreemptedBy = preemptedBy(wl)
	}
	if in.Queue == nil {
		ex.Verdict = fmt.Sprintf("waiting for LocalQueue %s: it or its ClusterQueue does not exist", in.LocalQueue)
		return
	}
	ex.Verdict = pendingVerdict(ex, in)
	ex.ExpectedStart, ex.ExpectedNote = in.Expected, in.ExpectedNote
	if in.Expected != nil {
		ex.Verdict += "; expected to start " + in.Expected.Sentence()
	}
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
	a := forecast.Assign(in.Roles, in.Queue)
	for i := range a.Roles {
		ex.Roles[i].Candidates = a.Roles[i].Candidates
	}
	for _, role := range slices.Sorted(maps.Keys(a.Uncovered)) {
		return fmt.Sprintf("never admitted: role %s requests %s, which ClusterQueue %s has no quota for", role, resourcesText(a.Uncovered[role]), cq.Name)
	}
	if a.Fits() {
		var borrowed []string
		for i := range a.Roles {
			for _, c := range a.Roles[i].Candidates {
				if c.Fit == forecast.Borrows && slices.Contains(a.Roles[i].Picked, c.Flavor) {
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
		r := slices.Sorted(maps.Keys(best.Short))[0]
		ledger := forecast.NewLedger(in.Queue)
		free := ledger.Free(best.Flavor, r)
		if free.Sign() < 0 {
			free = resource.Quantity{}
		}
		nominal := ledger.Nominal(best.Flavor, r)
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
	q := &forecast.Queue{ClusterQueue: idle, Flavors: in.Queue.Flavors, CohortLends: in.Queue.CohortCapacity}
	a := forecast.Assign(in.Roles, q)
	for _, r := range a.Roles {
		if r.Role == role && slices.Contains(r.Picked, "") {
			return "it does not fit even when the queue and its cohort are idle: shrink the job or raise the quota"
		}
	}
	return ""
}

func bestShort(cands []forecast.Candidate) *forecast.Candidate {
	var best *forecast.Candidate
	for i := range cands {
		c := &cands[i]
		if c.Fit != forecast.NoFit {
			continue
		}
		if best == nil || lessShort(c, best) {
			best = c
		}
	}
	return best
}

func lessShort(a, b *forecast.Candidate) bool {
	if len(a.Short) != len(b.Short) {
		return len(a.Short) < len(b.Short)
	}
	ra, rb := slices.Sorted(maps.Keys(a.Short))[0], slices.Sorted(maps.Keys(b.Short))[0]
	if ra != rb {
		return false
	}
	qa, qb := a.Short[ra], b.Short[rb]
	return qa.Cmp(qb) < 0
}

func qty(l corev1.ResourceList, r corev1.ResourceName) string {
	v := l[r]
	return v.String()
}

func listText(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, r := range slices.Sorted(maps.Keys(l)) {
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

func pickedText(a forecast.Assignment) string {
	parts := make([]string, 0, len(a.Roles))
	for _, r := range a.Roles {
		parts = append(parts, fmt.Sprintf("%s→%s", r.Role, strings.Join(r.Picked, "+")))
	}
	return strings.Join(parts, ", ")
}

func flavorsText(roles []roleExplanation) string {
	parts := make([]string, 0, len(roles))
	for _, r := range roles {
		set := map[string]string{}
		for _, f := range r.Flavors {
			set[f] = f
		}
		parts = append(parts, fmt.Sprintf("%s→%s", r.Name, strings.Join(slices.Sorted(maps.Keys(set)), "+")))
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

// preemptedBy is Kueue's word on the job's latest preemption, while it
// waits after it: the preemptor's Workload and, with Kueue's
// PriorityBoost, the effective priorities compared (the Workload's
// Preempted condition; "" when it was not preempted).
func preemptedBy(wl *kueue.Workload) string {
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPreempted); c != nil && c.Status == metav1.ConditionTrue {
		return c.Message
	}
	return ""
}
