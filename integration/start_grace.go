package integration

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// ReasonTerminationGraceNotInjected: the admitting ClusterQueue's
// preemption notice promises the pods a longer SIGTERM → SIGKILL grace
// than their template gives, and the installed Trainer's overrides can't
// carry one (before v2.3).
const ReasonTerminationGraceNotInjected = "TerminationGraceNotInjected"

// raiseGrace gives each role's pods the grace the admitting ClusterQueue's
// preemption notice promises (notice.terminationGraceSeconds) where their
// template (the runtime's, the user's patches) gives less: a loop that
// saves on SIGTERM has that long when the job is stopped. Only raised,
// never lowered; taken out by the stop with the rest of the admission's
// entries. Where the release can't carry it, the job's owner is told once
// and the job starts with its template's.
func (t *TrainJob) raiseGrace(ctx context.Context, want []shape.Injection, templates []kueue.PodSet) error {
	wl := t.obs.reserved()
	if wl == nil {
		return nil
	}
	policy, err := t.noticePolicy(ctx, wl)
	if err != nil {
		return err
	}
	for i := range want {
		idx := slices.IndexFunc(templates, func(ps kueue.PodSet) bool { return string(ps.Name) == want[i].Name })
		if idx < 0 {
			continue // startPlan refused it already
		}
		have := templates[idx].Template.Spec.TerminationGracePeriodSeconds
		grace, raise := preemptcost.TerminationGrace(policy, have)
		if !raise {
			continue
		}
		if !t.deps.caps.TerminationGrace {
			t.deps.speak(&t.TrainJob, warning(ReasonTerminationGraceNotInjected, actionStart, fmt.Sprintf(
				"ClusterQueue %s's preemption notice promises the pods %d s between SIGTERM and SIGKILL, but the installed Trainer's %s can't carry a pod's grace (Trainer v2.3+ can): role %q keeps its %d s. Set terminationGracePeriodSeconds in the runtime's pod template",
				wl.Status.Admission.ClusterQueue, grace, t.deps.caps.Field, want[i].Name, ptr.Deref(have, corev1.DefaultTerminationGracePeriodSeconds))).once(wl.UID))
			continue
		}
		want[i].TerminationGracePeriodSeconds = ptr.To(grace)
	}
	return nil
}
