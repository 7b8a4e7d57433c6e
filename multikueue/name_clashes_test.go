package multikueue

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/google/go-cmp/cmp"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A worker holds a Workload MultiKueue dispatched here while a TrainJob of
// its job's name that MultiKueue did not make for it is in the way: the
// quota goes back and Kueue does not admit it again; once that job is
// gone it is queued again. The job in the way is never written.
func TestAWorkerHoldsADispatchedWorkloadWhileItsJobsNameIsTaken(t *testing.T) {
	const wlName = "trainjob-clash-1a2b3"
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	reserved := func(wl *kueue.Workload) *kueue.Workload {
		workload.SetQuotaReservation(wl, &kueue.Admission{ClusterQueue: "cq"}, clocktesting.NewFakeClock(now.Add(-time.Minute)))
		return wl
	}
	dispatched := func() *kueue.Workload {
		return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: wlName, Labels: map[string]string{kueue.MultiKueueOriginLabel: "mk"}}}
	}
	onHold := func(wl *kueue.Workload) *kueue.Workload {
		workload.UnsetQuotaReservationWithCondition(wl, kueue.WorkloadOnHold, nameTaken(wl, theirs()), now.Add(-time.Minute))
		setRequeued(wl, ReasonNameTakenOnWorker, nameTaken(wl, theirs()), false, now.Add(-time.Minute))
		return wl
	}
	for name, tc := range map[string]struct {
		wl        *kueue.Workload
		job       *trainjob.TrainJob
		wantHeld  bool
		wantQuota bool
		writes    int
		event     string
	}{
		"admitted, the name taken by a job of its owner: held, quota back": {wl: reserved(dispatched()), job: theirs(), wantHeld: true, writes: 1, event: ReasonNameTakenOnWorker},
		"pending, the name taken: held before it takes quota":              {wl: dispatched(), job: theirs(), wantHeld: true, writes: 1, event: ReasonNameTakenOnWorker},
		"taken by a copy made for another Workload: held":                  {wl: reserved(dispatched()), job: copyFor("trainjob-clash-zzzzz"), wantHeld: true, writes: 1, event: ReasonNameTakenOnWorker},
		"held, still taken: no write":                                      {wl: onHold(dispatched()), job: theirs(), wantHeld: true},
		"held, the job in the way gone: queued again":                      {wl: onHold(dispatched()), event: ReasonHoldReleased, writes: 1},
		"held, the job in the way on its way out: queued again":            {wl: onHold(dispatched()), job: leaving(theirs()), event: ReasonHoldReleased, writes: 1},
		"admitted, no job yet (MultiKueue creates it next)":                {wl: reserved(dispatched()), wantQuota: true},
		"admitted, running its copy":                                       {wl: reserved(dispatched()), job: copyFor(wlName), wantQuota: true},
		"not dispatched here: never touched": {wl: func() *kueue.Workload {
			w := reserved(dispatched())
			w.Labels = nil
			return w
		}(), job: theirs(), wantQuota: true},
	} {
		t.Run(name, func(t *testing.T) {
			objs := []client.Object{tc.wl}
			if tc.job != nil {
				objs = append(objs, tc.job)
			}
			writes := 0
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithStatusSubresource(&kueue.Workload{}).
				WithInterceptorFuncs(interceptor.Funcs{
					Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
						t.Errorf("a write of %T %s outside its status", obj, obj.GetName())
						return nil
					},
					Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
						t.Errorf("an update of %T %s", obj, obj.GetName())
						return nil
					},
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
						if _, ok := obj.(*kueue.Workload); !ok {
							t.Errorf("a write of %T %s", obj, obj.GetName())
						}
						writes++
						return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
					},
				}).Build()
			rec := events.NewFakeRecorder(4)
			d := &NameClashes{client: c, recorder: rec, now: func() time.Time { return now }}
			for range 2 { // idempotent: the second reconcile finds it done
				if _, err := d.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tc.wl)}); err != nil {
					t.Fatal(err)
				}
			}
			got := &kueue.Workload{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(tc.wl), got); err != nil {
				t.Fatal(err)
			}
			if h := held(got) != nil; h != tc.wantHeld {
				t.Errorf("held %v, want %v: %v", h, tc.wantHeld, got.Status.Conditions)
			}
			if q := workload.HasQuotaReservation(got); q != tc.wantQuota {
				t.Errorf("quota reserved %v, want %v", q, tc.wantQuota)
			}
			// Kueue's own reading: a Workload on hold is not queued, and
			// is left alone where it needs DRA reconciling.
			if h := workload.IsOnHold(got); h != tc.wantHeld {
				t.Errorf("on hold by Kueue's reading %v, want %v: %v", h, tc.wantHeld, got.Status.Conditions)
			}
			if tc.wantHeld && workload.IsAdmissible(got) {
				t.Errorf("held but admissible to Kueue's queues: %v", got.Status.Conditions)
			}
			if tc.wantHeld && (got.Status.Admission != nil || apimeta.IsStatusConditionTrue(got.Status.Conditions, kueue.WorkloadAdmitted)) {
				t.Errorf("held but still admitted: %v", got.Status.Conditions)
			}
			if writes != tc.writes {
				t.Errorf("%d writes, want %d", writes, tc.writes)
			}
			var said []string
			for len(rec.Events) > 0 {
				said = append(said, <-rec.Events)
			}
			if tc.event == "" && len(said) > 0 || tc.event != "" && (len(said) != 1 || !strings.Contains(said[0], tc.event)) {
				t.Errorf("events %q, want one %s", said, tc.event)
			}
			if tc.job != nil {
				after := &trainjob.TrainJob{}
				if err := c.Get(t.Context(), client.ObjectKeyFromObject(tc.job), after); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.job.Spec, after.Spec); diff != "" || after.ResourceVersion != "999" {
					t.Errorf("the job in the way was written (resourceVersion %s): %s", after.ResourceVersion, diff)
				}
			}
		})
	}
}

// A refused hold (the Workload changed meanwhile) is not retried: the
// change brings its own reconcile.
func TestAHoldOnAWorkloadChangedMeanwhileIsNotRetried(t *testing.T) {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "trainjob-clash-1a2b3", Labels: map[string]string{kueue.MultiKueueOriginLabel: "mk"}}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(wl, theirs()).WithStatusSubresource(&kueue.Workload{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
				return apierrors.NewConflict(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "workloads"}, wl.Name, nil)
			},
		}).Build()
	rec := events.NewFakeRecorder(4)
	d := &NameClashes{client: c, recorder: rec, now: time.Now}
	if _, err := d.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(wl)}); err != nil {
		t.Errorf("a conflict returned %v: it would be retried with backoff beside the reconcile the change brings", err)
	}
	if len(rec.Events) != 0 {
		t.Errorf("said %q though nothing was held", <-rec.Events)
	}
}

// theirs is the worker's own TrainJob "clash", made without MultiKueue.
func theirs() *trainjob.TrainJob {
	return &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "clash", ResourceVersion: "999"}}
}

func copyFor(wl string) *trainjob.TrainJob {
	j := theirs()
	j.Labels = map[string]string{constants.PrebuiltWorkloadLabel: wl, kueue.MultiKueueOriginLabel: "mk"}
	return j
}

func leaving(j *trainjob.TrainJob) *trainjob.TrainJob {
	j.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	j.Finalizers = []string{"example.com/keep"}
	return j
}
