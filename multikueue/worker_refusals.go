package multikueue

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/trainjob-kueue/trainjob-kueue/saidonce"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

const (
	// copyGrace: how long a worker's copy of the Workload may be admitted
	// before MultiKueue has created the job there; past it, the manager
	// asks the worker (a dry run) whether it would take the job.
	copyGrace = 15 * time.Second
	// dispatchLookFirst and dispatchLookMost bound how often the workers
	// are read for a job whose dispatch waits: a first look soon, then
	// doubling, so a long backlog costs few reads.
	dispatchLookFirst = 10 * time.Second
	dispatchLookMost  = 5 * time.Minute
)

// workerReach gives clients of MultiKueue's worker clusters.
type workerReach interface {
	Client(ctx context.Context, cluster string) (client.Client, error)
	Forget(cluster string)
}

// WorkerRefusals is a MultiKueue manager's side of a dispatch that does not
// go through. Kueue's MultiKueue tells the manager nothing when a worker
// admits a job's Workload and the job cannot be created there: the check
// stays Pending with no message. So for a dispatched TrainJob whose
// Workload waits (quota reserved here, the MultiKueue check Pending), it
// reads the Workload's copy on each nominated worker, and
//   - says, on the manager's TrainJob, why a worker holds it (the worker's
//     trainjob-kueue held it: a TrainJob of its name is in the way there);
//   - when a worker admitted the copy and no job came there, asks the
//     worker with a dry run whether it takes the job MultiKueue would
//     create, and holds the copy there when it does not (its runtime
//     missing there, a webhook or policy of the worker), and releases it
//     once a later dry run is taken.
//
// It writes nothing on the manager.
type WorkerRefusals struct {
	client   client.Client
	workers  workerReach
	recorder events.EventRecorder
	said     *saidonce.Memory
	origin   string
	now      func() time.Time

	mu    sync.Mutex
	looks map[types.NamespacedName]int
}

// NewWorkerRefusals makes the manager's side; origin is MultiKueue's.
func NewWorkerRefusals(c client.Client, workers workerReach, recorder events.EventRecorder, origin string) *WorkerRefusals {
	return &WorkerRefusals{client: c, workers: workers, recorder: recorder, said: saidonce.New(), origin: origin, now: time.Now, looks: map[types.NamespacedName]int{}}
}

// Reconcile looks at the workers of one dispatched job's Workload.
func (d *WorkerRefusals) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wl := &kueue.Workload{}
	if err := d.client.Get(ctx, req.NamespacedName, wl); err != nil {
		d.forget(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	waiting, err := d.waiting(ctx, wl)
	if err != nil || !waiting {
		d.forget(req.NamespacedName)
		return ctrl.Result{}, err
	}
	owner := metav1.GetControllerOfNoCopy(wl)
	job := &trainjob.TrainJob{}
	if err := d.client.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: owner.Name}, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var words []string
	soon := time.Duration(0)
	for _, cluster := range wl.Status.NominatedClusterNames {
		word, again, err := d.onWorker(ctx, cluster, wl, job)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "reading the dispatch on a worker", "worker", cluster, "workload", klogKey(wl))
			continue
		}
		if word != "" {
			words = append(words, fmt.Sprintf("worker %s: %s", cluster, word))
		}
		if again > 0 && (soon == 0 || again < soon) {
			soon = again
		}
	}
	if len(words) > 0 {
		text := "MultiKueue dispatched this job to workers that cannot run it; it runs on one that can, once one has room. " + strings.Join(words, "; ")
		if d.said.First(job.UID, text) {
			d.recorder.Eventf(job, nil, corev1.EventTypeWarning, ReasonDispatchHeld, actionQueue, "%s", text)
		}
	}
	next := d.nextLook(req.NamespacedName)
	if soon > 0 && soon < next {
		next = soon
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// waiting: wl is a TrainJob's, reserved quota here, and its MultiKueue
// check is Pending: MultiKueue looks for a worker to admit it.
func (d *WorkerRefusals) waiting(ctx context.Context, wl *kueue.Workload) (bool, error) {
	owner := metav1.GetControllerOfNoCopy(wl)
	if owner == nil || owner.Kind != trainjob.GVK.Kind || !workload.HasQuotaReservation(wl) || workload.IsAdmitted(wl) || finished(wl) {
		return false, nil
	}
	for _, acs := range wl.Status.AdmissionChecks {
		if acs.State != kueue.CheckStatePending {
			continue
		}
		ac := &kueue.AdmissionCheck{}
		if err := d.client.Get(ctx, client.ObjectKey{Name: string(acs.Name)}, ac); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if ac.Spec.ControllerName == kueue.MultiKueueControllerName {
			return true, nil
		}
	}
	return false, nil
}

// onWorker is what cluster says of wl's copy: the word to pass on ("" for
// none), and how soon to look again (0 for the usual pace).
func (d *WorkerRefusals) onWorker(ctx context.Context, cluster string, wl *kueue.Workload, job *trainjob.TrainJob) (string, time.Duration, error) {
	rc, err := d.workers.Client(ctx, cluster)
	if err != nil {
		return "", 0, err
	}
	remote := &kueue.Workload{}
	if err := rc.Get(ctx, client.ObjectKeyFromObject(wl), remote); err != nil {
		if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
			d.workers.Forget(cluster)
		}
		return "", 0, client.IgnoreNotFound(err)
	}
	if h := held(remote); h != nil {
		if h.Reason == ReasonCopyRefusedOnWorker {
			refusal, err := d.refusal(ctx, rc, wl, job)
			if err != nil {
				return "", 0, err
			}
			if refusal == "" {
				msg := fmt.Sprintf("the worker takes TrainJob %s/%s now: Workload %s is queued there again", job.Namespace, job.Name, wl.Name)
				return "", 0, ignoreConflict(release(ctx, rc, remote, msg, d.now()))
			}
		}
		return h.Message, 0, nil
	}
	admitted := apimeta.FindStatusCondition(remote.Status.Conditions, kueue.WorkloadAdmitted)
	if admitted == nil || admitted.Status != metav1.ConditionTrue {
		return "", 0, nil
	}
	if wait := copyGrace - d.now().Sub(admitted.LastTransitionTime.Time); wait > 0 {
		return "", wait + time.Second, nil
	}
	if err := rc.Get(ctx, client.ObjectKeyFromObject(job), &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: trainjob.GVK.GroupVersion().String(), Kind: trainjob.GVK.Kind}}); !apierrors.IsNotFound(err) {
		// The copy is there (or a job in its way, the worker's to say), or
		// the worker can't be read now.
		return "", 0, err
	}
	refusal, err := d.refusal(ctx, rc, wl, job)
	if err != nil || refusal == "" {
		return "", 0, err
	}
	msg := fmt.Sprintf("the worker refuses the TrainJob %s/%s MultiKueue would create there for Workload %s: %s. "+
		"The Workload gives back its quota there and waits; the manager's trainjob-kueue asks the worker again every few minutes, and the Workload is queued there again once it takes the job",
		job.Namespace, job.Name, wl.Name, refusal)
	if err := hold(ctx, rc, remote, ReasonCopyRefusedOnWorker, msg, d.now()); err != nil {
		return "", 0, ignoreConflict(err)
	}
	return msg, 0, nil
}

// refusal is why the worker refuses the copy of job MultiKueue creates
// for wl ("" when it takes it): a dry run of that create.
func (d *WorkerRefusals) refusal(ctx context.Context, rc client.Client, wl *kueue.Workload, job *trainjob.TrainJob) (string, error) {
	dup, err := copyOf(job, wl.Name, d.origin)
	if err != nil {
		return "", err
	}
	err = rc.Create(ctx, dup, client.DryRunAll)
	switch {
	case err == nil || apierrors.IsAlreadyExists(err):
		return "", nil
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err):
		return err.Error(), nil
	}
	return "", fmt.Errorf("asking the worker whether it takes TrainJob %s/%s: %w", job.Namespace, job.Name, err)
}

// copyOf is the TrainJob MultiKueue's generic adapter creates on a worker
// for job: its labels, annotations and spec without spec.managedBy,
// marked with the origin and the prebuilt Workload's name.
func copyOf(job *trainjob.TrainJob, workloadName, origin string) (*unstructured.Unstructured, error) {
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&job.Spec)
	if err != nil {
		return nil, fmt.Errorf("copying TrainJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	delete(spec, "managedBy")
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(trainjob.GVK)
	u.SetNamespace(job.Namespace)
	u.SetName(job.Name)
	u.SetLabels(cloneMap(job.Labels))
	u.SetAnnotations(cloneMap(job.Annotations))
	jobframework.SetMultiKueueMeta(u, workloadName, origin)
	return u, nil
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// nextLook is when to look at a waiting dispatch again: soon at first,
// then doubling up to dispatchLookMost.
func (d *WorkerRefusals) nextLook(key types.NamespacedName) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.looks[key]
	d.looks[key] = n + 1
	next := dispatchLookFirst << min(n, 16)
	return min(next, dispatchLookMost)
}

func (d *WorkerRefusals) forget(key types.NamespacedName) {
	d.mu.Lock()
	delete(d.looks, key)
	d.mu.Unlock()
}

func klogKey(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }

// dispatched tells whether wl is a TrainJob's Workload that MultiKueue
// dispatches: one of its admission checks is MultiKueue's. Every change of
// such a Workload is seen, so the pace of looks is forgotten when its
// dispatch stops waiting; no other Workload is ever reconciled here, so a
// cluster whose checks are all another controller's (ProvisioningRequests,
// thousands of Workloads holding quota on them) gives this controller
// nothing to do. The AdmissionChecks are read from the cache.
func (d *WorkerRefusals) dispatched(ctx context.Context, wl *kueue.Workload) bool {
	if len(wl.Status.AdmissionChecks) == 0 {
		return false
	}
	if owner := metav1.GetControllerOfNoCopy(wl); owner == nil || owner.Kind != trainjob.GVK.Kind {
		return false
	}
	for _, acs := range wl.Status.AdmissionChecks {
		ac := &kueue.AdmissionCheck{}
		err := d.client.Get(ctx, client.ObjectKey{Name: string(acs.Name)}, ac)
		if err != nil && !apierrors.IsNotFound(err) {
			// Not known: look rather than miss a dispatch.
			return true
		}
		if err == nil && ac.Spec.ControllerName == kueue.MultiKueueControllerName {
			return true
		}
	}
	return false
}

// SetupWithManager watches the Workloads of dispatched TrainJobs, and the
// AdmissionChecks (to tell MultiKueue's from the rest) so their cache is
// synced before the first Workload is looked at.
func (d *WorkerRefusals) SetupWithManager(mgr ctrl.Manager) error {
	ctx := context.Background()
	dispatched := predicate.NewPredicateFuncs(func(o client.Object) bool {
		wl, ok := o.(*kueue.Workload)
		return ok && d.dispatched(ctx, wl)
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("multikueue-worker-refusals").
		For(&kueue.Workload{}, builder.WithPredicates(dispatched)).
		Watches(&kueue.AdmissionCheck{}, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request { return nil })).
		Complete(d)
}
