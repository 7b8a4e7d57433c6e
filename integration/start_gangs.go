package integration

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

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
	if setting.Mode == gang.Coscheduling {
		var err error
		if progress, err = t.deps.gangProgress(ctx, &t.TrainJob, t.obs); err != nil {
			return nil, err
		}
	}
	plans, refused := gang.PlanFor(gang.Request{
		Progress:     progress,
		Job:          t.Name,
		Setting:      setting,
		Roles:        t.obs.Roles,
		TrainerGang:  t.obs.Coscheduling != nil,
		Capabilities: t.deps.caps,
		PodGroupCRD:  t.deps.opts.PodGroups,
	})
	if refused != "" {
		return nil, t.refuse(refusal{gang.ReasonGangUnsupported, "labels", refused})
	}
	return plans, nil
}

// applyPodGroups creates or updates our PodGroups before the pods exist:
// a pod labelled for a PodGroup that is missing is refused by coscheduling.
func (t *TrainJob) applyPodGroups(ctx context.Context, plans []gang.Plan) error {
	for _, p := range plans {
		pg := gang.PodGroup(p, &t.TrainJob)
		//nolint:staticcheck // server-side apply of a typed object
		if err := t.deps.client.Patch(ctx, pg, client.Apply, client.FieldOwner(names.FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying PodGroup %s/%s for roles %s: %w", t.Namespace, p.Name, strings.Join(p.Roles, ","), err)
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
