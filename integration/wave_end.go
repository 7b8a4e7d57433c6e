package integration

import (
	"context"
	"slices"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// When a wave of a job ends — its initializers succeeded, its trainer nodes
// are not ready yet — two things change on its Workload at once: the
// initializers' pods become reclaimable, and PodsReady goes False
// (WaitForRecovery: the next wave is held to Kueue's recovery timeout).
// Kueue's job framework writes them in two reconciles: the reclaimable pods
// (step 4, which ends the reconcile) and then, woken by its own write,
// PodsReady (step 5): two requests and a round trip for one event, a third
// of the bench's load (docs/benchmark.md, "One write at a wave's end").
//
// So when this reconcile runs the PodsReady step and the framework's
// reclaimable-pods write is about to go while the condition it would
// write next differs, the two go in one server-side apply, under a field
// manager of ours that applies both, always whole (the full reclaimable
// list, computed as the framework's, and the one condition): a later apply
// of the framework's own managers takes either field back by force, and
// ours, never applying one without the other, removes nothing. The
// framework's next reconcile finds both written and writes neither. Only
// WaitForRecovery and Recovered are written so: Started is left to the
// framework, which reports its wait-time metrics with it.

// waveEnd carries, through one reconcile's context, the PodsReady condition
// to write with the reclaimable pods.
type waveEnd struct {
	podsReady *metav1.Condition
}

type waveEndKey struct{}

// withWaveEnd is ctx for a reconcile that runs the job framework's PodsReady
// step: its reclaimable-pods write may carry the condition.
func withWaveEnd(ctx context.Context) context.Context {
	return context.WithValue(ctx, waveEndKey{}, &waveEnd{})
}

func waveEndOf(ctx context.Context) *waveEnd {
	w, _ := ctx.Value(waveEndKey{}).(*waveEnd)
	return w
}

// The job framework's PodsReady messages (jobframework's
// generatePodsReadyCondition), written as it writes them.
const (
	podsReadyRecoveredMessage       = "All pods reached readiness and the workload is running"
	podsReadyWaitForRecoveryMessage = "At least one pod has failed, waiting for recovery"
)

// podsReadyAtWaveEnd is the PodsReady condition the job framework's next
// PodsReady step writes on wl, whose job's due pods are ready or not, when
// it is WaitForRecovery or Recovered; nil when that step writes nothing or
// something else. It follows the framework's rules (Kueue v0.16 to v0.19):
// only an admitted Workload that has the condition moves between the two.
func podsReadyAtWaveEnd(wl *kueue.Workload, ready bool, now time.Time) *metav1.Condition {
	if wl == nil || !workload.IsAdmitted(wl) {
		return nil
	}
	cur := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady)
	if cur == nil {
		return nil
	}
	var next metav1.Condition
	switch {
	case ready && cur.Reason == kueue.WorkloadWaitForRecovery:
		next = metav1.Condition{Status: metav1.ConditionTrue, Reason: kueue.WorkloadRecovered, Message: podsReadyRecoveredMessage}
	case !ready && cur.Status == metav1.ConditionTrue:
		next = metav1.Condition{Status: metav1.ConditionFalse, Reason: kueue.WorkloadWaitForRecovery, Message: podsReadyWaitForRecoveryMessage}
	default:
		return nil
	}
	if cur.Status == next.Status && cur.Reason == next.Reason {
		return nil
	}
	next.Type = kueue.WorkloadPodsReady
	next.LastTransitionTime = metav1.NewTime(now)
	return &next
}

// withPodsReady is the framework's reclaimable-pods apply of obj, with
// owner, carrying the wave's end when ctx has one: the condition added,
// under our field manager. ok is false when it is not such an apply, or
// nothing is to be added.
func withPodsReady(ctx context.Context, obj client.Object, patch client.Patch, opts []client.SubResourcePatchOption) (out []client.SubResourcePatchOption, ok bool) {
	w := waveEndOf(ctx)
	wl, isWorkload := obj.(*kueue.Workload)
	if w == nil || w.podsReady == nil || !isWorkload || patch.Type() != types.ApplyPatchType || len(wl.Status.Conditions) != 0 {
		return nil, false
	}
	i := slices.IndexFunc(opts, func(o client.SubResourcePatchOption) bool {
		owner, isOwner := o.(client.FieldOwner)
		return isOwner && owner == constants.ReclaimablePodsMgr
	})
	if i < 0 {
		return nil, false
	}
	cond := *w.podsReady
	cond.ObservedGeneration = wl.Generation
	wl.Status.Conditions = []metav1.Condition{cond}
	// Said once: a retried reconcile computes it again.
	w.podsReady = nil
	out = slices.Clone(opts)
	out[i] = client.FieldOwner(names.WaveEndFieldManager)
	return out, true
}
