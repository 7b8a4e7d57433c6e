package explain

import (
	"cmp"
	"slices"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// priorityInput is what explains a job's priority under its ClusterQueue's
// preemption-cost policy.
type priorityInput struct {
	// Policy is the ClusterQueue's policy annotation; "" for none.
	Policy string
	// Inactive is why a policy does nothing, as the manager said on the
	// ClusterQueue (an invalid policy, Kueue's gate off); "" when it acts
	// or nothing was said.
	Inactive string
	// Admitted are the Workloads holding quota in the ClusterQueue: the
	// candidates a preemption there chooses among.
	Admitted []kueue.Workload
	// Lost is the work a preemption would lose now, under a policy with a
	// checkpoint part; nil otherwise.
	Lost *lostWork
}

// lostWork is what a preemption of the job would lose now, as the
// policy's checkpoint part counts it, and when the boost next moves by
// time alone.
type lostWork struct {
	Seconds int64 `json:"seconds"`
	// NextStepSeconds: in how many seconds the boost next changes by
	// itself; 0 when only a report can move it.
	NextStepSeconds int64 `json:"nextStepSeconds"`
}

// priorityExplanation is a job's priority as Kueue weighs it.
type priorityExplanation struct {
	Base int32 `json:"base"`
	// Boost is kueue.x-k8s.io/priority-boost on the Workload; Parts are
	// ours when trainjob-kueue set it.
	Boost     int32              `json:"boost"`
	Parts     *preemptcost.Boost `json:"parts,omitempty"`
	BoostBy   string             `json:"boostBy,omitempty"`
	Effective int64              `json:"effective"`
	Policy    string             `json:"policy,omitempty"`
	Inactive  string             `json:"inactive,omitempty"`
	Lost      *lostWork          `json:"lost,omitempty"`
	// Candidates are the ClusterQueue's admitted Workloads in the order a
	// preemption in it picks victims: lowest effective priority first,
	// then the most recently admitted.
	Candidates []priorityPeer `json:"candidates,omitempty"`
}

// priorityPeer is one admitted Workload of the ClusterQueue.
type priorityPeer struct {
	Workload  string `json:"workload"`
	Effective int64  `json:"effective"`
	// This: the job explained.
	This bool `json:"this,omitempty"`
}

// explainPriority is nil for a job whose ClusterQueue has no policy and
// whose Workload has no boost: there is nothing to say beyond Kueue's.
func explainPriority(wl *kueue.Workload, in *priorityInput) *priorityExplanation {
	if wl == nil || in == nil {
		return nil
	}
	_, boosted := preemptcost.BoostOn(wl)
	if in.Policy == "" && !boosted {
		return nil
	}
	p := &priorityExplanation{Base: ptr.Deref(wl.Spec.Priority, 0), Policy: in.Policy, Inactive: in.Inactive, Lost: in.Lost}
	p.Boost = preemptcost.BoostValue(wl)
	p.Effective = int64(p.Base) + int64(p.Boost)
	if preemptcost.Marked(wl) {
		if b, ok := preemptcost.OursOn(wl); ok {
			p.Parts, p.BoostBy = &b, "trainjob-kueue"
		}
	} else if boosted {
		p.BoostBy = "someone else (not trainjob-kueue)"
	}
	type peer struct {
		priorityPeer
		admitted time.Time
	}
	var peers []peer
	for i := range in.Admitted {
		o := &in.Admitted[i]
		pp := peer{priorityPeer: priorityPeer{Workload: o.Namespace + "/" + o.Name, Effective: int64(ptr.Deref(o.Spec.Priority, 0)) + int64(preemptcost.BoostValue(o)), This: o.UID == wl.UID}}
		if c := apimeta.FindStatusCondition(o.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil {
			pp.admitted = c.LastTransitionTime.Time
		}
		peers = append(peers, pp)
	}
	slices.SortStableFunc(peers, func(a, b peer) int {
		return cmp.Or(cmp.Compare(a.Effective, b.Effective), b.admitted.Compare(a.admitted), cmp.Compare(a.Workload, b.Workload))
	})
	for _, pp := range peers {
		p.Candidates = append(p.Candidates, pp.priorityPeer)
	}
	return p
}
