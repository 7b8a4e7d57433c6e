package integration

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// GangKeeper keeps the PodGroup of Trainer's coscheduling plugin sized for
// the wave of roles being placed, while the job runs. Trainer sizes it for
// every role at once, finished or not yet created, and writes it only while
// the job is suspended or the group is missing; Trainer's rewrite on
// suspension is undone at the next start. A group that is already right is
// left alone, so jobs without initializers cost a read from the cache.
type GangKeeper struct {
	deps *deps
}

// Reconcile implements reconcile.Reconciler.
func (k *GangKeeper) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &trainjob.TrainJob{}
	if err := k.deps.client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	t := &TrainJob{TrainJob: *job, deps: k.deps}
	if runnerOf(job.Spec.ManagedBy) != runLocally || t.IsSuspended() {
		return ctrl.Result{}, nil
	}
	if _, _, finished := t.Finished(ctx); finished {
		return ctrl.Result{}, nil
	}
	// Only jobs Kueue admitted: a TrainJob outside Kueue is Trainer's alone.
	if t.reservedWorkload(ctx) == nil {
		return ctrl.Result{}, nil
	}
	// The job reconciler reports runtime problems; nothing to size then.
	if t.compute(ctx) != nil || t.coscheduling == nil {
		return ctrl.Result{}, nil
	}
	pg, err := trainerPodGroup(ctx, k.deps.client, job)
	if err != nil || pg == nil {
		return ctrl.Result{}, err
	}
	want := quota.SharedGang(t.roles, t.progress(ctx))
	if pg.Spec.MinMember == want.MinMember && equality.Semantic.DeepEqual(pg.Spec.MinResources, want.MinResources) {
		return ctrl.Result{}, nil
	}
	// The resourceVersion guard: a group Trainer rewrote meanwhile is read
	// again and sized again, never overwritten blind.
	patched := pg.DeepCopy()
	patched.Spec.MinMember, patched.Spec.MinResources = want.MinMember, want.MinResources
	if err := k.deps.client.Patch(ctx, patched, client.MergeFromWithOptions(pg, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, fmt.Errorf("sizing PodGroup %s/%s: %w", pg.Namespace, pg.Name, err)
	}
	k.deps.recorder.Eventf(job, corev1.EventTypeNormal, ReasonGangResized,
		"PodGroup %s: minMember %d → %d for %s, the pods that start now", pg.Name, pg.Spec.MinMember, want.MinMember, placingRoles(t))
	return ctrl.Result{}, nil
}

// placingRoles names the roles of the wave being placed, for events.
func placingRoles(t *TrainJob) string {
	waveOf, _ := quota.Waves(t.roles)
	w := quota.Placing(t.roles, t.progress(context.Background()))
	var names []string
	for i := range t.roles {
		if waveOf[i] == w {
			names = append(names, t.roles[i].Name)
		}
	}
	return strings.Join(names, ", ")
}

// SetupWithManager watches TrainJobs, whose status tells the wave, and the
// PodGroups they control, which Trainer may rewrite.
func (k *GangKeeper) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("trainjob-gang").
		For(&trainjob.TrainJob{}).
		Owns(&schedv1alpha1.PodGroup{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(k)
}
