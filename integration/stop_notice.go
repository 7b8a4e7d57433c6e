package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/jobpatch"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// A preemption notice (preemptcost.NoticePart): when Kueue evicts a
// running TrainJob's Workload for a reason that gets one, Stop leaves the
// job running and tells it — a Warning event, the notice on its Workload
// (list, explain and the queue condition read it there) and on its
// running pods (the downward API hands it to the training) — until the
// job reports a checkpoint made after the eviction, completes, or the
// notice runs out. Kueue keeps the victim's quota reserved meanwhile (the
// job framework clears a reservation only once the job is inactive), so
// the preemptor is admitted as soon as the victim stops.
//
// Every figure is derived from Kueue's Evicted condition (its time, which
// no user writes) and the ClusterQueue's policy: a manager restarted in a
// notice finds the same deadline, and nothing the job's owner writes
// makes the notice longer than the policy's.

// Outcomes of a notice: the metric's label and the event's words.
const (
	NoticeCheckpointed = "Checkpointed"
	NoticeRanOut       = "RanOut"
	NoticeCompleted    = "Completed"
)

// Reasons of the notice's events.
const (
	// ReasonPreemptionNotice: the job is being preempted and runs on
	// until its notice ends, to checkpoint.
	ReasonPreemptionNotice = "PreemptionNotice"
	// ReasonPreemptionNoticeEnded: the notice ended (how: the outcome).
	ReasonPreemptionNoticeEnded = "PreemptionNoticeEnded"
	// ReasonPreemptionNoticeNotTold: the notice could not be written on
	// the job's Workload or pods; it holds all the same.
	ReasonPreemptionNoticeNotTold = "PreemptionNoticeNotTold"
	// ReasonPreemptionNoticeNotHeld: the policy gives a notice, but the job
	// runs on a MultiKueue worker, where none can hold; stopped at once.
	ReasonPreemptionNoticeNotHeld = "PreemptionNoticeNotHeld"
)

const actionNotice = "PreemptionNotice"

// noticeWait is how long Stop leaves the job running for its notice; 0
// stops it now: no notice applies, the job checkpointed in its notice, or
// the notice ran out. Only a running job with active pods gets one: the
// job framework gives back the quota of an inactive job at once, and an
// unsuspended job without its quota would run unbooked.
func (t *TrainJob) noticeWait(ctx context.Context, now time.Time) (time.Duration, error) {
	if t.obs == nil || t.obs.workload == nil || t.IsSuspended() || !(t.IsActive() || t.trainerSucceeded()) {
		return 0, nil
	}
	wl := t.obs.workload
	policy, err := t.noticePolicy(ctx, wl)
	if err != nil || policy.Notice == nil {
		return 0, err
	}
	n, ok := preemptcost.NoticeOf(wl, preemptcost.NoticeLength(policy, &t.TrainJob))
	if !ok {
		return 0, nil
	}
	if _, dispatched := wl.Labels[kueue.MultiKueueOriginLabel]; dispatched {
		t.noticeNotHeld(n)
		return 0, nil
	}
	metric := checkpointMetric(policy)
	if on, written := preemptcost.NoticeOn(wl); written {
		n.LastCheckpoint = on.LastCheckpoint
	} else if at, reported := preemptcost.CheckpointAt(&t.TrainJob, metric, now); reported && at < n.Since.Unix() {
		n.LastCheckpoint = at
	}
	at, checkpointed := preemptcost.CheckpointedIn(n, &t.TrainJob, metric, now)
	switch {
	case !t.IsActive() && now.Before(n.Until):
		// Its trainer succeeded, and Trainer is about to say the job
		// completed: not stopped (the job framework gives its quota back
		// meanwhile, as for any inactive job), but looked at again soon.
		return min(completingRecheck, n.Until.Sub(now)), nil
	case checkpointed:
		t.noticeEnded(n, NoticeCheckpointed, fmt.Sprintf("it reported a checkpoint at %s, %s into its preemption notice; stopping it now",
			time.Unix(at, 0).UTC().Format(time.RFC3339), time.Unix(at, 0).Sub(n.Since)), n.Saved(admittedAt(wl)))
		return 0, nil
	case !now.Before(n.Until):
		t.noticeEnded(n, NoticeRanOut, fmt.Sprintf("its preemption notice of %s ran out at %s without a checkpoint reported in status.trainerStatus.metrics[%s]; stopping it now",
			n.Until.Sub(n.Since), n.Until.UTC().Format(time.RFC3339), metric), 0)
		return 0, nil
	}
	left := n.Until.Sub(now)
	if !t.tellNotice(ctx, wl, n, metric) {
		// Not told yet for a passing reason: told again soon, but the
		// notice is not one second longer for it.
		return min(tellRetry, left), nil
	}
	return left, nil
}

// noticeNotHeld says why a job MultiKueue dispatched to this worker gets
// no notice: the manager cluster's Kueue (v0.16 to v0.19) answers the
// Evicted condition of a worker's Workload by resetting the dispatch and
// deleting the job from the worker, measured 1.2 s after the eviction; a
// notice here would promise a time the job does not get. The label is
// MultiKueue's, on the Workload it made here; a user who forges it only
// loses the notice.
func (t *TrainJob) noticeNotHeld(n preemptcost.Notice) {
	t.say(warning(ReasonPreemptionNoticeNotHeld, actionNotice, fmt.Sprintf(
		"this ClusterQueue's policy gives a preemption notice of %s, but this TrainJob was dispatched here by MultiKueue (its Workload has the label %s), whose manager cluster deletes a job from its worker within seconds of its eviction there: no notice can hold on a worker. It is stopped now; its pods get SIGTERM and then their terminationGracePeriodSeconds, set in the runtime, to checkpoint",
		n.Until.Sub(n.Since), kueue.MultiKueueOriginLabel)).once(t.obs.workload.UID))
}

// completingRecheck: how soon a job in its notice whose trainer succeeded
// is looked at again, should Trainer's verdict not wake it first.
const completingRecheck = 2 * time.Second

// trainerSucceeded: every Job of the job's trainer role succeeded, so
// the job completes (Trainer's verdict follows). A job whose roles can't
// be told is not taken to.
func (t *TrainJob) trainerSucceeded() bool {
	succeeded := map[string]int32{}
	for _, s := range t.obs.jobs {
		succeeded[s.Name] = ptr.Deref(s.Succeeded, 0)
	}
	found := false
	for _, r := range t.obs.Roles {
		if r.Ancestor != podsets.AncestorTrainer {
			continue
		}
		if succeeded[r.Name] < r.Replicas {
			return false
		}
		found = true
	}
	return found
}

// noticePolicy is the policy of the ClusterQueue that admitted wl (from
// the cache); a ClusterQueue gone, or a policy that can't be used, gives
// no notice (the webhook refuses such a policy; the warner says so).
func (t *TrainJob) noticePolicy(ctx context.Context, wl *kueue.Workload) (preemptcost.Policy, error) {
	if wl.Status.Admission == nil {
		return preemptcost.Policy{}, nil
	}
	cq := &kueue.ClusterQueue{}
	if err := t.deps.client.Get(ctx, client.ObjectKey{Name: string(wl.Status.Admission.ClusterQueue)}, cq); err != nil {
		return preemptcost.Policy{}, client.IgnoreNotFound(err)
	}
	p, _, err := preemptcost.PolicyOf(cq)
	if err != nil {
		return preemptcost.Policy{}, nil
	}
	return p, nil
}

// checkpointMetric is the metric a job reports its checkpoints under.
func checkpointMetric(p preemptcost.Policy) string {
	if p.Checkpoint != nil {
		return p.Checkpoint.MetricName()
	}
	return preemptcost.DefaultCheckpointMetric
}

// admittedAt is when wl was last admitted: the start of the run a notice
// interrupts.
func admittedAt(wl *kueue.Workload) time.Time {
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// tellRetry: how soon a notice whose telling failed for a passing reason
// (a conflict, a timeout, the API server unavailable) is told again.
const tellRetry = 5 * time.Second

// tellNotice writes the notice on the Workload and the job's running pods
// (each only where it is not already written: a restarted manager writes
// nothing new) and says it once. A write that fails does not make the job
// wait longer or stop sooner: the notice is derived, not written, and the
// stop comes at its end whatever was told. A write refused (a webhook's
// or a policy's denial, RBAC) is said once and not tried again in this
// notice. done: told, or refused for good; false when a passing failure
// is to be tried again.
func (t *TrainJob) tellNotice(ctx context.Context, wl *kueue.Workload, n preemptcost.Notice, metric string) (done bool) {
	value := n.Value()
	var failed []error
	if refusedKey := "notice refused on the Workload " + value; wl.Annotations[names.PreemptingAnnotation] != value && !t.deps.said.Said(wl.UID, refusedKey) {
		if err := annotate(ctx, t.deps.client, wl, value); err != nil {
			if tellRefused(err) {
				t.deps.said.First(wl.UID, refusedKey)
			}
			failed = append(failed, fmt.Errorf("on Workload %s/%s: %w", wl.Namespace, wl.Name, err))
		}
	}
	if podsTold := "pods told of the notice " + value; t.deps.said.First(wl.UID, podsTold) {
		if err := t.tellPods(ctx, value); err != nil {
			if !tellRefused(err) {
				t.deps.said.Forget(wl.UID, podsTold)
			}
			failed = append(failed, err)
		}
	}
	ev := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted) // NoticeOf found it
	t.say(warning(ReasonPreemptionNotice, actionNotice, fmt.Sprintf(
		"Kueue evicted this TrainJob's Workload (%s: %s); its preemption notice lets it run until %s (%s) to checkpoint. It is stopped as soon as it reports in status.trainerStatus.metrics[%s] a checkpoint made at or after %s (Unix %d), or completes; its pods carry the notice in their annotation %s",
		ev.Reason, ev.Message, n.Until.UTC().Format(time.RFC3339), n.Until.Sub(n.Since), metric, n.Since.UTC().Format(time.RFC3339), n.Since.Unix(), names.PreemptingAnnotation)).once(wl.UID))
	if len(failed) == 0 {
		return true
	}
	err := errors.Join(failed...)
	ctrl.LoggerFrom(ctx).Error(err, "Writing a preemption notice", "trainJob", t.Namespace+"/"+t.Name)
	refused, again := tellRefused(err), fmt.Sprintf("it is tried again every %s", tellRetry)
	if refused {
		again = "refused: it is not tried again in this notice; allow trainjob-kueue's patch of the annotation " + names.PreemptingAnnotation
	}
	// Said once per notice and kind (a passing failure's text changes
	// from one try to the next).
	if t.deps.said.First(wl.UID, fmt.Sprintf("notice not told %s refused=%t", value, refused)) {
		t.say(warning(ReasonPreemptionNoticeNotTold, actionNotice, fmt.Sprintf(
			"the preemption notice until %s could not be written (%v); %s. The notice holds all the same: the job is stopped at its first checkpoint reported in it, or at its end",
			n.Until.UTC().Format(time.RFC3339), err, again)))
	}
	return refused
}

// tellRefused: every failure in err is a refusal (an admission denial, an
// invalid object, RBAC), which trying again would not mend.
func tellRefused(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !tellRefused(e) {
				return false
			}
		}
		return true
	}
	return jobpatch.Refused(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err)
}

// noticeEnded says how the notice ended and counts it, once per notice.
func (t *TrainJob) noticeEnded(n preemptcost.Notice, outcome, words string, saved int64) {
	wl := t.obs.workload
	if !t.deps.said.First(wl.UID, "notice ended "+n.Value()) {
		return
	}
	t.deps.metrics.NoticeEnded(outcome, saved)
	t.say(normal(ReasonPreemptionNoticeEnded, actionNotice, outcome+": "+words).once(wl.UID))
}

// noticeCompleted counts a job that completed in its notice: it is not
// preempted at all.
func (t *TrainJob) noticeCompleted() {
	if t.obs == nil {
		return
	}
	if n, ok := preemptcost.NoticeOn(t.obs.workload); ok {
		t.noticeEnded(n, NoticeCompleted, "it finished within its preemption notice; it is not queued again", 0)
	}
}

// annotate sets the notice annotation on obj alone (a merge patch of one
// key of ours).
func annotate(ctx context.Context, c client.Client, obj client.Object, value string) error {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{names.PreemptingAnnotation: value}}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
}

// tellPods writes the notice on the job's running pods: those its JobSet's
// label names whose owners are, hop by hop by UID, this TrainJob's Jobs
// (a pod that only carries the label is not told). Read from the API
// server: once per notice, and the manager keeps no pod cache.
func (t *TrainJob) tellPods(ctx context.Context, value string) error {
	r, ns := t.deps.apiReader, t.Namespace
	js := &jobsetapi.JobSet{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: t.Name}, js); err != nil {
		return client.IgnoreNotFound(err)
	}
	if owner := metav1.GetControllerOfNoCopy(js); owner == nil || owner.UID != t.UID {
		return nil
	}
	sel := client.MatchingLabels{jobsetapi.JobSetNameKey: t.Name}
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(ns), sel); err != nil {
		return fmt.Errorf("listing the Jobs of TrainJob %s/%s: %w", ns, t.Name, err)
	}
	ours := map[types.UID]bool{}
	for i := range jobs.Items {
		if owner := metav1.GetControllerOfNoCopy(&jobs.Items[i]); owner != nil && owner.UID == js.UID {
			ours[jobs.Items[i].UID] = true
		}
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(ns), sel); err != nil {
		return fmt.Errorf("listing the pods of TrainJob %s/%s: %w", ns, t.Name, err)
	}
	var failed []error // one pod refused: the others are told all the same
	for i := range pods.Items {
		p := &pods.Items[i]
		owner := metav1.GetControllerOfNoCopy(p)
		if owner == nil || !ours[owner.UID] || p.Annotations[names.PreemptingAnnotation] == value || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if err := annotate(ctx, t.deps.client, p, value); client.IgnoreNotFound(err) != nil {
			failed = append(failed, fmt.Errorf("on pod %s/%s: %w", ns, p.Name, err))
		}
	}
	return errors.Join(failed...)
}
