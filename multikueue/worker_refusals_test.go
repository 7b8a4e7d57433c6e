package multikueue

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// oneWorker reaches the one worker of the tests.
type oneWorker struct {
	c      client.Client
	reads  int
	forgot bool
}

func (w *oneWorker) Client(context.Context, string) (client.Client, error) {
	w.reads++
	return w.c, nil
}
func (w *oneWorker) Forget(string) { w.forgot = true }

// What the manager's side does for a dispatched job whose Workload waits,
// by what the worker holds: it passes a worker's hold on as a Warning on
// the manager's TrainJob; it asks a worker that admitted the copy and got
// no job whether it takes the job (a dry run), holds the copy there when
// it does not and releases it when it does again; and it writes nothing
// on the manager.
func TestTheManagerSaysAndHoldsWhatAWorkerCannotRun(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "clash", UID: "job-uid", Labels: map[string]string{constants.QueueLabel: "lq"}}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch"}
	job.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
	const wlName = "trainjob-clash-1a2b3"
	local := func(mutate func(*kueue.Workload)) *kueue.Workload {
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: wlName,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: trainjob.GVK.GroupVersion().String(), Kind: "TrainJob", Name: "clash", UID: "job-uid", Controller: ptr.To(true)}}}}
		workload.SetQuotaReservation(wl, &kueue.Admission{ClusterQueue: "cq"}, clocktesting.NewFakeClock(now.Add(-time.Minute)))
		wl.Status.AdmissionChecks = []kueue.AdmissionCheckState{{Name: "multikueue", State: kueue.CheckStatePending}}
		wl.Status.NominatedClusterNames = []string{"worker1"}
		if mutate != nil {
			mutate(wl)
		}
		return wl
	}
	check := &kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "multikueue"}, Spec: kueue.AdmissionCheckSpec{ControllerName: kueue.MultiKueueControllerName}}
	remote := func(mutate func(*kueue.Workload)) *kueue.Workload {
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: wlName, Labels: map[string]string{kueue.MultiKueueOriginLabel: "multikueue"}}}
		if mutate != nil {
			mutate(wl)
		}
		return wl
	}
	admittedAgo := func(ago time.Duration) func(*kueue.Workload) {
		return func(wl *kueue.Workload) {
			workload.SetQuotaReservation(wl, &kueue.Admission{ClusterQueue: "cq"}, clocktesting.NewFakeClock(now.Add(-ago)))
			workload.SyncAdmittedCondition(wl, now.Add(-ago))
		}
	}
	heldFor := func(reason, msg string) func(*kueue.Workload) {
		return func(wl *kueue.Workload) {
			workload.UnsetQuotaReservationWithCondition(wl, reason, msg, now.Add(-time.Minute))
			setRequeued(wl, reason, msg, false, now.Add(-time.Minute))
		}
	}
	refused := apierrors.NewInvalid(schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "TrainJob"}, "clash",
		field.ErrorList{field.Invalid(field.NewPath("spec", "runtimeRef"), "torch", "specified trainingRuntime must be created before the TrainJob is created")})
	for name, tc := range map[string]struct {
		local      *kueue.Workload
		remote     *kueue.Workload
		copyThere  bool
		dryRun     error
		wantWord   string // in the Warning on the manager's job; "" for none
		wantHold   string // the remote's hold reason after; "" for none
		wantWrites int    // on the worker
		noLook     bool
	}{
		"the worker held it, a name taken there: said": {local: local(nil), remote: remote(heldFor(ReasonNameTakenOnWorker, "TrainJob ns/clash already exists on this cluster")),
			wantWord: "worker worker1: TrainJob ns/clash already exists", wantHold: ReasonNameTakenOnWorker},
		"admitted there, no job came, the worker refuses it: held there, said": {local: local(nil), remote: remote(admittedAgo(time.Minute)), dryRun: refused,
			wantWord: "specified trainingRuntime must be created", wantHold: ReasonCopyRefusedOnWorker, wantWrites: 1},
		"admitted there, no job yet, the worker takes it: MultiKueue's to create": {local: local(nil), remote: remote(admittedAgo(time.Minute))},
		"admitted there a moment ago: MultiKueue is creating the job":             {local: local(nil), remote: remote(admittedAgo(time.Second)), dryRun: refused},
		"admitted there, its job there: nothing":                                  {local: local(nil), remote: remote(admittedAgo(time.Minute)), copyThere: true, dryRun: refused},
		"held for a refusal, refused still: said, no write": {local: local(nil), remote: remote(heldFor(ReasonCopyRefusedOnWorker, "the worker refuses the TrainJob ns/clash")), dryRun: refused,
			wantWord: "the worker refuses", wantHold: ReasonCopyRefusedOnWorker},
		"held for a refusal, taken now: released": {local: local(nil), remote: remote(heldFor(ReasonCopyRefusedOnWorker, "the worker refuses the TrainJob ns/clash")),
			wantWrites: 1},
		"pending there: nothing": {local: local(nil), remote: remote(nil)},
		"the job admitted through the check: not looked at": {local: local(func(wl *kueue.Workload) {
			wl.Status.AdmissionChecks[0].State = kueue.CheckStateReady
			workload.SyncAdmittedCondition(wl, now)
		}), remote: remote(admittedAgo(time.Minute)), dryRun: refused, noLook: true},
	} {
		t.Run(name, func(t *testing.T) {
			managerWrites := 0
			mgr := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tc.local, check, job.DeepCopy()).
				WithInterceptorFuncs(interceptor.Funcs{
					Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
						managerWrites++
						return nil
					},
					Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
						managerWrites++
						return nil
					},
					Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
						managerWrites++
						return nil
					},
					SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
						managerWrites++
						return nil
					},
				}).Build()
			objs := []client.Object{tc.remote}
			if tc.copyThere {
				objs = append(objs, &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "clash"}})
			}
			workerWrites, dryRuns := 0, 0
			var created *unstructured.Unstructured
			wc := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithStatusSubresource(&kueue.Workload{}).
				WithInterceptorFuncs(interceptor.Funcs{
					Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
						co := &client.CreateOptions{}
						co.ApplyOptions(opts)
						if !slices.Equal(co.DryRun, []string{metav1.DryRunAll}) {
							t.Errorf("a real create of %s on the worker", obj.GetName())
						}
						dryRuns++
						created = obj.(*unstructured.Unstructured)
						return tc.dryRun
					},
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
						workerWrites++
						return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
					},
				}).Build()
			w := &oneWorker{c: wc}
			rec := events.NewFakeRecorder(8)
			d := NewWorkerRefusals(mgr, w, rec, "multikueue")
			d.now = func() time.Time { return now }
			var res ctrl.Result
			for range 2 { // said once, written once
				var err error
				if res, err = d.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tc.local)}); err != nil {
					t.Fatal(err)
				}
			}
			if managerWrites > 0 {
				t.Errorf("%d writes on the manager", managerWrites)
			}
			if tc.noLook != (w.reads == 0) {
				t.Errorf("%d looks at the worker, want looked %v", w.reads, !tc.noLook)
			}
			if !tc.noLook && res.RequeueAfter == 0 {
				t.Errorf("a waiting dispatch is not looked at again")
			}
			var said []string
			for len(rec.Events) > 0 {
				said = append(said, <-rec.Events)
			}
			switch {
			case tc.wantWord == "" && len(said) > 0:
				t.Errorf("said %q", said)
			case tc.wantWord != "" && (len(said) != 1 || !strings.Contains(said[0], tc.wantWord) || !strings.Contains(said[0], ReasonDispatchHeld)):
				t.Errorf("said %q, want one %s saying %q", said, ReasonDispatchHeld, tc.wantWord)
			}
			after := &kueue.Workload{}
			if err := wc.Get(t.Context(), client.ObjectKeyFromObject(tc.remote), after); err != nil {
				t.Fatal(err)
			}
			hold := ""
			if h := held(after); h != nil {
				hold = h.Reason
			}
			if hold != tc.wantHold {
				t.Errorf("the worker's copy held for %q, want %q: %v", hold, tc.wantHold, after.Status.Conditions)
			}
			if hold != "" && workload.HasQuotaReservation(after) {
				t.Errorf("held but holding quota: %v", after.Status.Conditions)
			}
			if workerWrites != tc.wantWrites {
				t.Errorf("%d writes on the worker, want %d", workerWrites, tc.wantWrites)
			}
			if created != nil {
				if managed, found, _ := unstructured.NestedString(created.Object, "spec", "managedBy"); found {
					t.Errorf("the dry run's copy keeps spec.managedBy %q: MultiKueue's copy has none", managed)
				}
				if created.GetLabels()[kueue.MultiKueueOriginLabel] != "multikueue" || created.GetName() != "clash" {
					t.Errorf("the dry run's copy %s, labels %v: not MultiKueue's", created.GetName(), created.GetLabels())
				}
			}
		})
	}
}

// A dispatch that waits is looked at soon, then less and less often: a
// backlog of jobs waiting for room on the workers costs few reads.
func TestAWaitingDispatchIsLookedAtLessAndLessOften(t *testing.T) {
	d := NewWorkerRefusals(nil, nil, nil, "")
	key := client.ObjectKey{Namespace: "ns", Name: "wl"}
	var got []time.Duration
	for range 8 {
		got = append(got, d.nextLook(key))
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	if !slices.Equal(got, want) {
		t.Errorf("looks after %v, want %v", got, want)
	}
	d.forget(key)
	if next := d.nextLook(key); next != 10*time.Second {
		t.Errorf("after the dispatch stopped waiting, the next look is in %v, want 10s", next)
	}
}

// Only a TrainJob's Workload with MultiKueue's admission check is looked
// at: on a cluster whose checks are all another controller's (thousands of
// Workloads holding quota on ProvisioningRequests) the controller has
// nothing to do.
func TestOnlyMultiKueueDispatchesAreLookedAt(t *testing.T) {
	checks := []client.Object{
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "dispatch"}, Spec: kueue.AdmissionCheckSpec{ControllerName: kueue.MultiKueueControllerName}},
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "provision"}, Spec: kueue.AdmissionCheckSpec{ControllerName: kueue.ProvisioningRequestControllerName}},
	}
	workloadOf := func(kind string, names ...kueue.AdmissionCheckReference) *kueue.Workload {
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: kind, Name: "job", UID: "uid", Controller: ptr.To(true)}}}}
		for _, n := range names {
			wl.Status.AdmissionChecks = append(wl.Status.AdmissionChecks, kueue.AdmissionCheckState{Name: n, State: kueue.CheckStatePending})
		}
		return wl
	}
	cases := map[string]struct {
		wl       *kueue.Workload
		getFails bool
		want     bool
	}{
		"a TrainJob's with MultiKueue's check":               {wl: workloadOf("TrainJob", "dispatch"), want: true},
		"a TrainJob's with MultiKueue's among others":        {wl: workloadOf("TrainJob", "provision", "dispatch"), want: true},
		"a TrainJob's with a provisioning check only":        {wl: workloadOf("TrainJob", "provision")},
		"a TrainJob's with no check":                         {wl: workloadOf("TrainJob")},
		"a TrainJob's whose check is gone":                   {wl: workloadOf("TrainJob", "deleted")},
		"a JobSet's with MultiKueue's check":                 {wl: workloadOf("JobSet", "dispatch")},
		"a TrainJob's whose check cannot be read: looked at": {wl: workloadOf("TrainJob", "provision"), getFails: true, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(checks...)
			if tc.getFails {
				b = b.WithInterceptorFuncs(interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return apierrors.NewServiceUnavailable("cache not synced")
				}})
			}
			d := NewWorkerRefusals(b.Build(), &oneWorker{}, events.NewFakeRecorder(1), "")
			if got := d.dispatched(t.Context(), tc.wl); got != tc.want {
				t.Errorf("dispatched = %t, want %t", got, tc.want)
			}
		})
	}
}
