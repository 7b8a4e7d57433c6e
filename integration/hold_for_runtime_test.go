package integration

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A job whose runtime does not exist has its Workload deactivated (and
// marked) while it waits, and reactivated once the runtime is back; nobody
// else's deactivation is undone, and a running job is left alone.
func TestAJobWaitsForItsRuntimeOutOfTheQueue(t *testing.T) {
	missing := &runtimesource.Error{Reason: ReasonRuntimeNotFound, Message: "gone"}
	outOfDate := &runtimesource.Error{Reason: ReasonJobSetOutOfDate, Message: "edited"}
	cases := map[string]struct {
		active     bool
		reserved   bool
		held       bool
		running    bool
		runtimeErr *runtimesource.Error
		gone       *runtimesource.Error // Trainer v2.3: the snapshot's runtime deleted
		heldFor    *runtimesource.Error // the start was refused for the runtime
		outgrown   *runtimesource.Error
		wantActive bool
		wantHeld   bool
		writes     int
		event      string
	}{
		"runtime missing under a reservation: held":                              {active: true, reserved: true, runtimeErr: missing, wantHeld: true, writes: 1, event: ReasonHeldForRuntime},
		"runtime missing, nothing reserved: left pending":                        {active: true, runtimeErr: missing, wantActive: true},
		"Trainer v2.3, the snapshot's runtime deleted under a reservation: held": {active: true, reserved: true, gone: missing, wantHeld: true, writes: 1, event: ReasonHeldForRuntime},
		"Trainer v2.3, held, the runtime still gone: no write":                   {held: true, gone: missing, wantHeld: true},
		"the start refused for a runtime the cache still had: held":              {active: true, reserved: true, heldFor: missing, wantHeld: true, writes: 1, event: ReasonHeldForRuntime},
		"held, runtime still missing: no write":                                  {held: true, runtimeErr: missing, wantHeld: true},
		"held, runtime back: queued again":                                       {held: true, wantActive: true, writes: 1, event: ReasonRuntimeBack},
		"held, runtime back but unusable: queued":                                {held: true, runtimeErr: &runtimesource.Error{Reason: ReasonInvalidRuntime}, wantActive: true, writes: 1, event: ReasonRuntimeBack},
		"deactivated by someone else: kept so":                                   {},
		"JobSet out of date under a reservation: held":                           {active: true, reserved: true, outgrown: outOfDate, wantHeld: true, writes: 1, event: ReasonJobSetOutOfDate},
		"held, JobSet still out of date: no write":                               {held: true, outgrown: outOfDate, wantHeld: true},
		"held, JobSet agrees again: queued again":                                {held: true, wantActive: true, writes: 1, event: ReasonRuntimeBack},
		"running: left alone":                                                    {active: true, reserved: true, running: true, runtimeErr: missing, wantActive: true},
		"runtime there: nothing to do":                                           {active: true, wantActive: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl", Annotations: map[string]string{}}}
			wl.Spec.Active = ptr.To(tc.active)
			if tc.reserved {
				wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: metav1.Now()}}
			}
			if tc.held {
				wl.Annotations[names.HeldForRuntimeAnnotation] = "TrainingRuntime ns/torch"
			}
			c, read, writes := storedWorkload(t, wl)
			rec := events.NewFakeRecorder(4)
			job := trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"}}
			job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch"}
			job.Spec.Suspend = ptr.To(!tc.running)
			adapter := &TrainJob{TrainJob: job, deps: &deps{client: c, recorder: rec}, obs: &observed{workload: read, runtimeErr: tc.runtimeErr, runtimeGone: tc.gone, outgrown: tc.outgrown}, heldFor: tc.heldFor}
			if err := adapter.holdForRuntime(t.Context()); err != nil {
				t.Fatal(err)
			}
			if *writes != tc.writes {
				t.Errorf("%d writes, want %d", *writes, tc.writes)
			}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(wl), read); err != nil {
				t.Fatal(err)
			}
			if got := ptr.Deref(read.Spec.Active, true); got != tc.wantActive {
				t.Errorf("active %v, want %v", got, tc.wantActive)
			}
			if _, got := read.Annotations[names.HeldForRuntimeAnnotation]; got != tc.wantHeld {
				t.Errorf("marked %v, want %v", got, tc.wantHeld)
			}
			got := drain(rec)
			if tc.event == "" && len(got) > 0 || tc.event != "" && (len(got) != 1 || !strings.Contains(got[0], tc.event)) {
				t.Errorf("events %q, want %q", got, tc.event)
			}
		})
	}
}

// storedWorkload stores wl in a fake API server that counts the patches
// it takes, and returns the client, wl as read back, and the count.
func storedWorkload(t *testing.T, wl *kueue.Workload) (client.Client, *kueue.Workload, *int) {
	t.Helper()
	writes := 0
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(wl).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes++
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	read := &kueue.Workload{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(wl), read); err != nil {
		t.Fatal(err)
	}
	return c, read, &writes
}
