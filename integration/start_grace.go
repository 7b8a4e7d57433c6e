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

// ReasonTerminationGraceShort: the admitting ClusterQueue's preemption
// notice promises the pods a longer SIGTERM → SIGKILL grace than their
// template gives them.
const ReasonTerminationGraceShort = "TerminationGraceShort"

// sayGraceShort tells the job's owner, once per admission, which roles'
// pods get less grace than the admitting ClusterQueue's preemption notice
// promises (notice.terminationGraceSeconds). It is said, never written:
// Trainer builds the job's JobSet when the job is created (suspended),
// and JobSet refuses any later change of a pod template's grace (only the
// scheduling fields of a suspended JobSet's pods may change) — written at
// admission, it would leave the job admitted, holding its quota, and
// never started. The runtime's pod template is where the grace goes.
func (t *TrainJob) sayGraceShort(ctx context.Context, want []shape.Injection, templates []kueue.PodSet) error {
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
		grace, short := preemptcost.TerminationGrace(policy, have)
		if !short {
			continue
		}
		t.deps.speak(&t.TrainJob, warning(ReasonTerminationGraceShort, actionStart, fmt.Sprintf(
			"ClusterQueue %s's preemption notice promises the pods %d s between SIGTERM and SIGKILL, but role %q's pod template gives them %d s, which trainjob-kueue cannot raise (JobSet refuses a change of a pod's grace once the job's JobSet exists). Set terminationGracePeriodSeconds: %d in the runtime's pod template for %q",
			wl.Status.Admission.ClusterQueue, grace, want[i].Name, ptr.Deref(have, corev1.DefaultTerminationGracePeriodSeconds), grace, want[i].Name)).once(wl.UID))
	}
	return nil
}
