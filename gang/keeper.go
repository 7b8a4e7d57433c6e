package gang

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

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

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Running is what the keeper needs of a TrainJob that runs on Kueue's
// admission.
type Running struct {
	Job *trainjob.TrainJob
	// Roles as admitted: a runtime edited since does not describe the pods.
	Roles []podsets.Role
	// TrainerGang: Trainer's coscheduling plugin made the job's PodGroup.
	TrainerGang bool
	// Progress of each role, by name.
	Progress map[string]quota.Progress
	// AdmittedAt is when Kueue admitted the job.
	AdmittedAt time.Time
}

// Jobs tells the keeper about running jobs: nil (and no error) for a job
// that is not running here on Kueue's admission, or whose roles can't be
// told; an error only for a read that failed.
type Jobs interface {
	Running(ctx context.Context, key types.NamespacedName) (*Running, error)
}

// KeeperOptions wire a Keeper.
type KeeperOptions struct {
	// Client reads PodGroups from the cache and writes them.
	Client client.Client
	Jobs   Jobs
	// Say tells a job's owner what was done to its gang (an event).
	Say func(job *trainjob.TrainJob, reason, msg string)
	// Counted, when set, is told every action on a PodGroup (resized,
	// retried).
	Counted func(action string)
	// RetryInterval; zero means DefaultRetryInterval.
	RetryInterval time.Duration
	// JobSets: the installed Trainer reports its Jobs only on the JobSet
	// (v2.0), so the waves' progress shows there, not on the TrainJob.
	JobSets bool
}

// Actions a Keeper counts.
const (
	ActionResized = "resized"
	ActionCreated = "created"
	ActionRetried = "retried"
	ActionDeleted = "deleted"
)

// Keeper looks after the PodGroups of running jobs.
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
type Keeper struct {
	opts    KeeperOptions
	waiting *waitingGangs
}

// NewKeeper makes a keeper.
func NewKeeper(opts KeeperOptions) *Keeper {
	return &Keeper{opts: opts, waiting: newWaitingGangs()}
}

// DefaultRetryInterval is how often a waiting gang is retried.
const DefaultRetryInterval = 10 * time.Second

// Reconcile implements reconcile.Reconciler.
func (k *Keeper) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, waiting, err := k.reconcile(ctx, req)
	k.waiting.set(req.NamespacedName, waiting)
	return res, err
}

// reconcile also says whether the job's gang waits for room.
func (k *Keeper) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, bool, error) {
	r, err := k.opts.Jobs.Running(ctx, req.NamespacedName)
	if err != nil || r == nil {
		return ctrl.Result{}, false, err
	}
	var groups []*schedv1alpha1.PodGroup
	if r.TrainerGang {
		pg, err := k.trainerPodGroup(ctx, r.Job)
		if err != nil || pg == nil {
			return ctrl.Result{}, false, err
		}
		if pg, err = k.size(ctx, r, pg); err != nil {
			return ctrl.Result{}, false, err
		}
		groups = append(groups, pg)
	} else {
		if groups, err = k.ownWaitingGroups(ctx, r); err != nil || len(groups) == 0 {
			return ctrl.Result{}, false, err
		}
	}
	if quota.Due(r.Roles, r.Progress) {
		return ctrl.Result{}, false, nil
	}
	res, err := k.retry(ctx, r, groups)
	return res, true, err
}

// size writes the shared gang of the wave being placed into Trainer's
// PodGroup, when it differs, and returns the group as written.
func (k *Keeper) size(ctx context.Context, r *Running, pg *schedv1alpha1.PodGroup) (*schedv1alpha1.PodGroup, error) {
	want := quota.SharedGang(r.Roles, r.Progress)
	if pg.Spec.MinMember == want.MinMember && equality.Semantic.DeepEqual(pg.Spec.MinResources, want.MinResources) {
		return pg, nil
	}
	// The resourceVersion guard: a group Trainer rewrote meanwhile is read
	// again and sized again, never overwritten blind.
	patched := pg.DeepCopy()
	patched.Spec.MinMember, patched.Spec.MinResources = want.MinMember, want.MinResources
	if err := k.opts.Client.Patch(ctx, patched, client.MergeFromWithOptions(pg, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("sizing PodGroup %s/%s: %w", pg.Namespace, pg.Name, err)
	}
	k.count(ActionResized)
	if k.opts.Say != nil {
		k.opts.Say(r.Job, ReasonGangResized, fmt.Sprintf("PodGroup %s: minMember %d → %d for %s, the pods that start now", pg.Name, pg.Spec.MinMember, want.MinMember, placingRoles(r)))
	}
	return patched, nil
}

func (k *Keeper) count(action string) {
	if k.opts.Counted != nil {
		k.opts.Counted(action)
	}
}

// retry touches the groups of a gang that waits for room, at most once per
// interval, and comes back after the interval.
func (k *Keeper) retry(ctx context.Context, r *Running, groups []*schedv1alpha1.PodGroup) (ctrl.Result, error) {
	interval := cmp.Or(k.opts.RetryInterval, DefaultRetryInterval)
	now := time.Now()
	if k.waiting.takeNow(client.ObjectKeyFromObject(r.Job)) {
		// Another job stopped running: retry now, whatever the interval
		// says, but not more than once a second.
		interval = min(interval, time.Second)
	}
	wait := interval
	for _, pg := range groups {
		last := r.AdmittedAt
		if at, err := time.Parse(time.RFC3339Nano, pg.Annotations[names.GangRetriedAtAnnotation]); err == nil && at.After(last) {
			last = at
		}
		if left := last.Add(interval).Sub(now); left > 0 {
			wait = min(wait, left)
			continue
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, names.GangRetriedAtAnnotation, now.UTC().Format(time.RFC3339Nano))
		if err := k.opts.Client.Patch(ctx, pg, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return ctrl.Result{}, fmt.Errorf("retrying the gang of PodGroup %s/%s: %w", pg.Namespace, pg.Name, err)
		}
		k.count(ActionRetried)
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// trainerPodGroup is the PodGroup Trainer's coscheduling plugin made for
// job, from the cache; nil when there is none or it is not the job's.
func (k *Keeper) trainerPodGroup(ctx context.Context, job *trainjob.TrainJob) (*schedv1alpha1.PodGroup, error) {
	pg := &schedv1alpha1.PodGroup{}
	if err := k.opts.Client.Get(ctx, client.ObjectKeyFromObject(job), pg); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if owner := metav1.GetControllerOfNoCopy(pg); owner == nil || owner.UID != job.UID || pg.Labels[names.OwnedLabel] == "true" {
		return nil, nil
	}
	return pg, nil
}

// ownWaitingGroups are the PodGroups we made for the waves of r whose roles
// are due and not all placed.
func (k *Keeper) ownWaitingGroups(ctx context.Context, r *Running) ([]*schedv1alpha1.PodGroup, error) {
	waiting := quota.Waiting(r.Roles, r.Progress)
	waves := quota.WaveGangs(r.Roles, nil)
	var out []*schedv1alpha1.PodGroup
	for i, w := range waves {
		pg := &schedv1alpha1.PodGroup{}
		key := client.ObjectKey{Namespace: r.Job.Namespace, Name: PodGroupName(r.Job.Name, w.Roles[0], i == len(waves)-1)}
		if err := k.opts.Client.Get(ctx, key, pg); err != nil {
			if client.IgnoreNotFound(err) == nil {
				continue
			}
			return nil, fmt.Errorf("reading PodGroup %s: %w", key, err)
		}
		if owner := metav1.GetControllerOfNoCopy(pg); owner == nil || owner.UID != r.Job.UID || pg.Labels[names.OwnedLabel] != "true" {
			continue
		}
		if slices.ContainsFunc(w.Roles, func(r string) bool { return slices.Contains(waiting, r) }) {
			out = append(out, pg)
		}
	}
	return out, nil
}

// placingRoles names the roles of the wave being placed, for events.
func placingRoles(r *Running) string {
	waveOf, _ := quota.Waves(r.Roles)
	w := quota.Placing(r.Roles, r.Progress)
	var names []string
	for i := range r.Roles {
		if waveOf[i] == w {
			names = append(names, r.Roles[i].Name)
		}
	}
	return strings.Join(names, ", ")
}

// SetupWithManager watches TrainJobs, whose status tells the wave (on
// Trainer v2.0 their JobSets do), and the PodGroups they control, which
// Trainer may rewrite. Only the jobs that have a PodGroup are looked at
// (withGroups): on a cluster where few jobs are ganged, the others' status
// changes cost no reconcile.
func (k *Keeper) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &schedv1alpha1.PodGroup{}, controllerIndex, controllerUID); err != nil {
		return fmt.Errorf("indexing PodGroups by their controller: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr)
	if k.opts.JobSets {
		b = b.Owns(&jobsetapi.JobSet{}, builder.WithPredicates(k.withGroups()))
	}
	return b.
		Named("trainjob-gang").
		// A queued job has no pods to gang: its events are not ours.
		For(&trainjob.TrainJob{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			tj, ok := o.(*trainjob.TrainJob)
			return ok && !ptr.Deref(tj.Spec.Suspend, false)
		}), k.withGroups())).
		Owns(&schedv1alpha1.PodGroup{}).
		WatchesRawSource(source.Kind(mgr.GetCache(), &trainjob.TrainJob{}, k.waiting.onStop())).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(k)
}

// controllerIndex indexes PodGroups by the UID of their controller.
const controllerIndex = "trainjob-kueue.dev/podgroup-controller"

func controllerUID(o client.Object) []string {
	if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

// withGroups passes the events of a TrainJob, or of the JobSet it controls,
// while a PodGroup in the cache is controlled by that job: Trainer's or one
// of ours. A job with none has nothing to keep, and the creation of its
// first brings it (Owns). From the cache's index, without copies.
func (k *Keeper) withGroups() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		uid := o.GetUID()
		if _, ok := o.(*trainjob.TrainJob); !ok {
			ref := metav1.GetControllerOfNoCopy(o)
			if ref == nil {
				return false
			}
			uid = ref.UID
		}
		var pgs schedv1alpha1.PodGroupList
		if err := k.opts.Client.List(context.Background(), &pgs, client.InNamespace(o.GetNamespace()),
			client.MatchingFields{controllerIndex: string(uid)}, client.UnsafeDisableDeepCopy); err != nil {
			return true // can't tell: the reconcile reads again
		}
		return len(pgs.Items) > 0
	})
}
