package integration

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// GangKeeper looks after the PodGroups of running jobs.
//
// It keeps the PodGroup of Trainer's coscheduling plugin sized for the wave
// of roles being placed. Trainer sizes it for every role at once, finished
// or not yet created, and writes it only while the job is suspended or the
// group is missing; Trainer's rewrite on suspension is undone at the next
// start. A group that is already right is left alone, so a job without
// initializers costs a read from the cache.
//
// And it retries gangs that wait for room. Coscheduling turns a gang away
// in PreFilter when the cluster lacks its minResources, and only a new pod
// or a PodGroup change brings it back before kube-scheduler's periodic
// flush of unschedulable pods (5 minutes by default): finished pods freeing
// the room do not. A gang whose due pods are not all placed RetryInterval
// after admission gets its PodGroup touched (an annotation) every
// RetryInterval until they are, and at once when another TrainJob stops
// running.
type GangKeeper struct {
	deps *deps
	// RetryInterval; zero means DefaultGangRetryInterval.
	RetryInterval time.Duration

	waiting *waitingGangs
}

// NewGangKeeper makes a keeper for the jobs of r.
func NewGangKeeper(r *Reconciler, retryInterval time.Duration) *GangKeeper {
	return &GangKeeper{deps: r.deps, RetryInterval: retryInterval, waiting: newWaitingGangs()}
}

// DefaultGangRetryInterval is how often a waiting gang is retried.
const DefaultGangRetryInterval = 10 * time.Second

// AnnotationGangRetriedAt on a PodGroup is when we last retried its gang.
const AnnotationGangRetriedAt = "trainjob-kueue.dev/gang-retried-at"

// Reconcile implements reconcile.Reconciler.
func (k *GangKeeper) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, waiting, err := k.reconcile(ctx, req)
	k.waiting.set(req.NamespacedName, waiting)
	return res, err
}

// reconcile also says whether the job's gang waits for room.
func (k *GangKeeper) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, bool, error) {
	job := &trainjob.TrainJob{}
	if err := k.deps.client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, false, client.IgnoreNotFound(err)
	}
	t := &TrainJob{TrainJob: *job, deps: k.deps}
	if runnerOf(job.Spec.ManagedBy) != runLocally || t.IsSuspended() {
		return ctrl.Result{}, false, nil
	}
	if _, _, finished := t.Finished(ctx); finished {
		return ctrl.Result{}, false, nil
	}
	// Only jobs Kueue admitted: a TrainJob outside Kueue is Trainer's alone.
	wl := t.reservedWorkload(ctx)
	if wl == nil {
		return ctrl.Result{}, false, nil
	}
	// The job reconciler reports runtime problems (a running job does not
	// even need its runtime any more); without roles there is nothing to
	// size, and nothing to say twice. Roles from a runtime edited since
	// the admission don't describe the pods that run: leave the gang be.
	p, err := t.project(ctx)
	if err != nil || !sameDemand(wl.Spec.PodSets, p.podSets) {
		return ctrl.Result{}, false, nil
	}
	t.computed, t.roles, t.podSets, t.coscheduling = true, p.roles, p.podSets, p.coscheduling
	progress := t.progress(ctx)
	var groups []*schedv1alpha1.PodGroup
	if t.coscheduling != nil {
		var pg *schedv1alpha1.PodGroup
		pg, err = trainerPodGroup(ctx, k.deps.client, job)
		if err != nil || pg == nil {
			return ctrl.Result{}, false, err
		}
		if pg, err = k.size(ctx, t, pg, progress); err != nil {
			return ctrl.Result{}, false, err
		}
		groups = append(groups, pg)
	} else {
		if groups, err = ownWaitingGroups(ctx, k.deps.client, t, progress); err != nil || len(groups) == 0 {
			return ctrl.Result{}, false, err
		}
	}
	if quota.Due(t.roles, progress) {
		return ctrl.Result{}, false, nil
	}
	res, err := k.retry(ctx, t, groups)
	return res, true, err
}

// size writes the shared gang of the wave being placed into Trainer's
// PodGroup, when it differs, and returns the group as written.
func (k *GangKeeper) size(ctx context.Context, t *TrainJob, pg *schedv1alpha1.PodGroup, progress map[string]quota.Progress) (*schedv1alpha1.PodGroup, error) {
	want := quota.SharedGang(t.roles, progress)
	if pg.Spec.MinMember == want.MinMember && equality.Semantic.DeepEqual(pg.Spec.MinResources, want.MinResources) {
		return pg, nil
	}
	// The resourceVersion guard: a group Trainer rewrote meanwhile is read
	// again and sized again, never overwritten blind.
	patched := pg.DeepCopy()
	patched.Spec.MinMember, patched.Spec.MinResources = want.MinMember, want.MinResources
	if err := k.deps.client.Patch(ctx, patched, client.MergeFromWithOptions(pg, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("sizing PodGroup %s/%s: %w", pg.Namespace, pg.Name, err)
	}
	k.deps.metrics.gang(gangResized)
	k.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeNormal, ReasonGangResized, actionGang,
		"PodGroup %s: minMember %d → %d for %s, the pods that start now", pg.Name, pg.Spec.MinMember, want.MinMember, placingRoles(t, progress))
	return patched, nil
}

// retry touches the groups of a gang that waits for room, at most once per
// interval, and comes back after the interval.
func (k *GangKeeper) retry(ctx context.Context, t *TrainJob, groups []*schedv1alpha1.PodGroup) (ctrl.Result, error) {
	interval := cmp.Or(k.RetryInterval, DefaultGangRetryInterval)
	now := time.Now()
	since := t.admittedAt(ctx)
	if k.waiting.takeNow(client.ObjectKeyFromObject(&t.TrainJob)) {
		// Another job stopped running: retry now, whatever the interval
		// says, but not more than once a second.
		interval = min(interval, time.Second)
	}
	wait := interval
	for _, pg := range groups {
		last := since
		if at, err := time.Parse(time.RFC3339Nano, pg.Annotations[AnnotationGangRetriedAt]); err == nil && at.After(last) {
			last = at
		}
		if left := last.Add(interval).Sub(now); left > 0 {
			wait = min(wait, left)
			continue
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, AnnotationGangRetriedAt, now.UTC().Format(time.RFC3339Nano))
		if err := k.deps.client.Patch(ctx, pg, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return ctrl.Result{}, fmt.Errorf("retrying the gang of PodGroup %s/%s: %w", pg.Namespace, pg.Name, err)
		}
		k.deps.metrics.gang(gangRetried)
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// ownWaitingGroups are the PodGroups we made for the waves of t whose roles
// are due and not all placed.
func ownWaitingGroups(ctx context.Context, c client.Reader, t *TrainJob, progress map[string]quota.Progress) ([]*schedv1alpha1.PodGroup, error) {
	waiting := quota.Waiting(t.roles, progress)
	waves := quota.WaveGangs(t.roles)
	var out []*schedv1alpha1.PodGroup
	for i, w := range waves {
		pg := &schedv1alpha1.PodGroup{}
		key := client.ObjectKey{Namespace: t.Namespace, Name: podGroupName(t.Name, w.Roles[0], i == len(waves)-1)}
		if err := c.Get(ctx, key, pg); err != nil {
			if client.IgnoreNotFound(err) == nil {
				continue
			}
			return nil, err
		}
		if owner := metav1.GetControllerOfNoCopy(pg); owner == nil || owner.UID != t.UID || pg.Labels[shape.OwnedLabel] != "true" {
			continue
		}
		if slices.ContainsFunc(w.Roles, func(r string) bool { return slices.Contains(waiting, r) }) {
			out = append(out, pg)
		}
	}
	return out, nil
}

// placingRoles names the roles of the wave being placed, for events.
func placingRoles(t *TrainJob, progress map[string]quota.Progress) string {
	waveOf, _ := quota.Waves(t.roles)
	w := quota.Placing(t.roles, progress)
	var names []string
	for i := range t.roles {
		if waveOf[i] == w {
			names = append(names, t.roles[i].Name)
		}
	}
	return strings.Join(names, ", ")
}

// SetupWithManager watches TrainJobs, whose status tells the wave (on
// Trainer v2.0 their JobSets do), and the PodGroups they control, which
// Trainer may rewrite.
func (k *GangKeeper) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr)
	if k.deps.opts.Shape.Rules().NoJobsStatus {
		// Trainer v2.0 reports its Jobs only on the JobSet: the waves'
		// progress shows there, not on the TrainJob.
		b = b.Owns(&jobsetapi.JobSet{})
	}
	return b.
		Named("trainjob-gang").
		// A queued job has no pods to gang: its events are not ours.
		For(&trainjob.TrainJob{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			tj, ok := o.(*trainjob.TrainJob)
			return ok && !ptr.Deref(tj.Spec.Suspend, false)
		}))).
		Owns(&schedv1alpha1.PodGroup{}).
		WatchesRawSource(source.Kind(mgr.GetCache(), &trainjob.TrainJob{}, k.waiting.onStop())).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(k)
}
