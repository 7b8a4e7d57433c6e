package integration

import (
	"context"
	"errors"
	"slices"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
)

// gangPlans are the PodGroups the job gets from us at its start, decided
// by package gang from the job, its ClusterQueue and what the installed
// Trainer and scheduler can do.
func (t *TrainJob) gangPlans(ctx context.Context) ([]gang.Plan, error) {
	setting, warnings := gang.SettingOf(t.Annotations, t.obs.clusterQueue)
	for _, w := range warnings {
		t.deps.speak(&t.TrainJob, warning(gang.ReasonInvalidGangScheduling, actionGang, w))
	}
	var progress map[string]quota.Progress
	if gang.Gangs(setting.Mode) {
		var err error
		if progress, err = t.deps.gangProgress(ctx, &t.TrainJob, t.obs); err != nil {
			return nil, err
		}
	}
	plans, refused, unserved := gang.PlanFor(gang.Request{
		Progress:     progress,
		Job:          t.Name,
		Setting:      setting,
		Roles:        t.obs.Roles,
		TrainerGang:  t.obs.Coscheduling != nil,
		Capabilities: t.deps.caps,
		Gangs:        t.deps.opts.Gangs,
		Admission:    admissionToken(t.obs.reserved()),
	})
	if refused != "" {
		return nil, t.refuse(refusal{gang.ReasonGangUnsupported, "labels", refused})
	}
	if unserved != "" {
		// An admin's set-up, not the job's fault: it waits, never finished.
		msg := unserved + ". The job is not started and keeps its quota reservation (Kueue's waitForPodsReady, where on, gives it back at its timeout and queues the job again); it is retried with back-off and starts once trainjob-kueue serves the mode"
		t.deps.speak(&t.TrainJob, warning(gang.ReasonGangUnsupported, actionGang, msg).once(workloadUID(t.obs.reserved())))
		return nil, errors.New(msg)
	}
	return plans, nil
}

// applyPodGroups creates or updates our PodGroups before the pods exist:
// a pod labelled for a PodGroup that is missing is refused by coscheduling
// and by our pod webhook (Workload API groups). A write that does not
// go through is a *podGroupError (podgroup_write.go): the job's start
// waits for it, never finished for it.
func (t *TrainJob) applyPodGroups(ctx context.Context, plans []gang.Plan) error {
	for _, p := range plans {
		if p.WorkloadAPI {
			if _, err := t.createWorkloadAPIGroup(ctx, p); err != nil {
				return err
			}
			continue
		}
		//nolint:staticcheck // server-side apply of a whole object of ours
		if err := t.deps.client.Patch(ctx, gang.PodGroup(p, &t.TrainJob), client.Apply, client.FieldOwner(names.FieldManager), client.ForceOwnership); err != nil {
			return podGroupNotWritten(t.Namespace, p, err)
		}
		t.deps.metrics.Gang(gang.ActionCreated)
	}
	return nil
}

// gangTimeoutConflict: Kueue's waitForPodsReady would evict the job
// before coscheduling gives up on its gang; "" when it would not.
func (t *TrainJob) gangTimeoutConflict(plans []gang.Plan) string {
	if !t.deps.opts.WaitForPodsReady {
		return ""
	}
	return gang.TimeoutConflict(t.obs.Roles, t.obs.Coscheduling, plans, t.deps.opts.PodsReadyTimeouts)
}

// podPriorityClass is the PriorityClass the pods of roles are created
// with (the first that names one): a Kubernetes PodGroup's priority must
// be its pods'.
func (t *TrainJob) podPriorityClass(roles []string) string {
	for _, r := range t.obs.Roles {
		if slices.Contains(roles, r.Name) && r.Template.Spec.PriorityClassName != "" {
			return r.Template.Spec.PriorityClassName
		}
	}
	return ""
}

// admissionToken tells the Workload's current admission from its earlier
// ones; "" without a reservation.
func admissionToken(wl *kueue.Workload) string {
	if wl == nil {
		return ""
	}
	var at metav1.Time
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil {
		at = c.LastTransitionTime
	}
	return gang.AdmissionToken(wl.UID, at)
}

// releaseWorkloadAPIGroups has gang's writer delete the job's PodGroups
// (mode workload-api) of admissions that ended — evicted, preempted or
// finished, the groups go with their pods, and a re-admission gets fresh
// ones — and keeps those of the admission that runs (podgroup_keep.go).
// Run after every reconcile of a job Kueue manages, so a crash between a
// stop and the deletion loses nothing.
func (t *TrainJob) releaseWorkloadAPIGroups(ctx context.Context) error {
	if !t.deps.opts.Gangs.WorkloadAPI || t.obs == nil || t.UID == "" {
		return nil
	}
	kept, err := t.deps.workloadAPIGroups().Release(ctx, &t.TrainJob, admissionToken(t.obs.reserved()))
	if err != nil {
		return err
	}
	return t.keepWorkloadAPIGroups(ctx, kept)
}

// workloadAPIGroups is gang's writer of the job's PodGroups (mode
// workload-api), with the manager's clients and metrics.
func (d *deps) workloadAPIGroups() gang.WorkloadAPIWriter {
	return gang.WorkloadAPIWriter{Client: d.client, Live: d.apiReader, Count: d.metrics.Gang}
}
