package preemptcost

import (
	"fmt"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// Reasons of the Warnings on a ClusterQueue whose policy has no effect,
// stable: users and alerts match on them.
const (
	// ReasonInvalidPolicy: a ClusterQueue's policy can't be used; nothing
	// is written for its jobs until it is mended.
	ReasonInvalidPolicy = "InvalidPreemptionCostPolicy"
	// ReasonGateOff: a ClusterQueue has a policy but Kueue ignores
	// priority boosts (its PriorityBoost gate is off).
	ReasonGateOff = "PriorityBoostInactive"
)

// Inactive says why cq's preemption-cost policy does nothing, naming the
// field and the fix; "" when it has none or it acts. A policy of a notice
// alone acts whatever Kueue's gate: it boosts nothing.
func Inactive(cq *kueue.ClusterQueue, gateOn bool) (reason, msg string) {
	p, set, err := PolicyOf(cq)
	if !set {
		return "", ""
	}
	if err != nil {
		return ReasonInvalidPolicy, fmt.Sprintf("annotation %s: %v. No priority boost is written for this ClusterQueue's jobs until it is mended", names.PreemptionCostAnnotation, err)
	}
	if !gateOn && len(p.parts()) > 0 {
		msg = fmt.Sprintf("annotation %s is set, but Kueue ignores priority boosts: its PriorityBoost feature gate is off (alpha, Kueue v0.17+). Turn it on in Kueue's Configuration (featureGates: {PriorityBoost: true}) and restart Kueue and trainjob-kueue", names.PreemptionCostAnnotation)
		if p.Notice != nil {
			msg += "; its preemption notice acts without it"
		}
		return ReasonGateOff, msg
	}
	return "", ""
}
