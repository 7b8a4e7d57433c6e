package integration

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/constants"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// The condition written with the reclaimable pods is the one the job
// framework's PodsReady step would write next, and only WaitForRecovery or
// Recovered: Started stays the framework's (its metrics), and nothing is
// written where the framework would write nothing.
func TestPodsReadyAtWaveEnd(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	admitted := []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved"},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted"},
	}
	podsReady := func(status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: kueue.WorkloadPodsReady, Status: status, Reason: reason}
	}
	waitForRecovery := &metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionFalse, Reason: kueue.WorkloadWaitForRecovery,
		Message: podsReadyWaitForRecoveryMessage, LastTransitionTime: metav1.NewTime(now)}
	recovered := &metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionTrue, Reason: kueue.WorkloadRecovered,
		Message: podsReadyRecoveredMessage, LastTransitionTime: metav1.NewTime(now)}
	for name, tc := range map[string]struct {
		conds []metav1.Condition
		ready bool
		none  bool
		want  *metav1.Condition
	}{
		"started, the next wave not ready":             {conds: append(admitted, podsReady(metav1.ConditionTrue, kueue.WorkloadStarted)), want: waitForRecovery},
		"recovered, the next wave not ready":           {conds: append(admitted, podsReady(metav1.ConditionTrue, kueue.WorkloadRecovered)), want: waitForRecovery},
		"waiting for recovery, the wave ready":         {conds: append(admitted, podsReady(metav1.ConditionFalse, kueue.WorkloadWaitForRecovery)), ready: true, want: recovered},
		"waiting for recovery, still not ready":        {conds: append(admitted, podsReady(metav1.ConditionFalse, kueue.WorkloadWaitForRecovery))},
		"started and still ready":                      {conds: append(admitted, podsReady(metav1.ConditionTrue, kueue.WorkloadStarted)), ready: true},
		"recovered and still ready":                    {conds: append(admitted, podsReady(metav1.ConditionTrue, kueue.WorkloadRecovered)), ready: true},
		"waiting for start, ready: Started is Kueue's": {conds: append(admitted, podsReady(metav1.ConditionFalse, kueue.WorkloadWaitForStart)), ready: true},
		"waiting for start, not ready":                 {conds: append(admitted, podsReady(metav1.ConditionFalse, kueue.WorkloadWaitForStart))},
		"no condition yet, ready":                      {conds: admitted, ready: true},
		"no condition yet, not ready":                  {conds: admitted},
		"not admitted, was started":                    {conds: append(admitted[:1:1], podsReady(metav1.ConditionTrue, kueue.WorkloadStarted))},
		"no Workload":                                  {none: true, ready: true},
	} {
		t.Run(name, func(t *testing.T) {
			var wl *kueue.Workload
			if !tc.none {
				wl = &kueue.Workload{Status: kueue.WorkloadStatus{Conditions: tc.conds}}
			}
			got := podsReadyAtWaveEnd(wl, tc.ready, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}

// The job framework's reclaimable-pods apply carries the wave's end
// condition, under our field manager, when the reconcile has one; every
// other status write goes as it was made.
func TestFrameworkStatusWriterWritesTheWaveEndOnce(t *testing.T) {
	cond := metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionFalse, Reason: kueue.WorkloadWaitForRecovery}
	reclaimable := []kueue.ReclaimablePod{{Name: "dataset-initializer", Count: 1}}
	withCond := func(ctx context.Context) context.Context {
		ctx = withWaveEnd(ctx)
		waveEndOf(ctx).podsReady = &cond
		return ctx
	}
	type sent struct {
		owner string
		conds []metav1.Condition
	}
	applied := func(owner string, conds ...metav1.Condition) []sent {
		return []sent{{owner: owner, conds: conds}}
	}
	carried := cond
	carried.ObservedGeneration = 3
	for name, tc := range map[string]struct {
		ctx   func(context.Context) context.Context
		owner client.FieldOwner
		patch client.Patch
		want  []sent
	}{
		"the reclaimable pods at a wave's end": {ctx: withCond, owner: constants.ReclaimablePodsMgr, patch: client.Apply,
			want: append(applied(names.WaveEndFieldManager, carried), applied(constants.ReclaimablePodsMgr)...)},
		"the reclaimable pods, no wave's end": {ctx: withWaveEnd, owner: constants.ReclaimablePodsMgr, patch: client.Apply,
			want: append(applied(constants.ReclaimablePodsMgr), applied(constants.ReclaimablePodsMgr)...)},
		"a reconcile without the PodsReady step": {ctx: func(ctx context.Context) context.Context { return ctx }, owner: constants.ReclaimablePodsMgr, patch: client.Apply,
			want: append(applied(constants.ReclaimablePodsMgr), applied(constants.ReclaimablePodsMgr)...)},
		"another field manager's apply": {ctx: withCond, owner: "kueue-admission", patch: client.Apply,
			want: append(applied("kueue-admission"), applied("kueue-admission")...)},
		"a merge patch": {ctx: withCond, owner: constants.ReclaimablePodsMgr, patch: client.RawPatch(types.MergePatchType, []byte(`{}`)),
			want: append(applied(constants.ReclaimablePodsMgr), applied(constants.ReclaimablePodsMgr)...)},
	} {
		t.Run(name, func(t *testing.T) {
			var got []sent
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
				SubResourcePatch: func(_ context.Context, _ client.Client, _ string, obj client.Object, _ client.Patch, opts ...client.SubResourcePatchOption) error {
					po := &client.SubResourcePatchOptions{}
					po.ApplyOptions(opts)
					if po.Force == nil || !*po.Force {
						t.Errorf("sent without forcing ownership, as the framework forces it")
					}
					got = append(got, sent{owner: po.FieldManager, conds: obj.(*kueue.Workload).Status.Conditions})
					return nil
				}}).Build()
			ctx := tc.ctx(t.Context())
			// Twice in one reconcile: the condition goes with the first
			// write only.
			for range 2 {
				wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl", Generation: 3}, Status: kueue.WorkloadStatus{ReclaimablePods: reclaimable}}
				if err := (frameworkClient{c}).Status().Patch(ctx, wl, tc.patch, tc.owner, client.ForceOwnership); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(sent{})); diff != "" {
				t.Errorf("status writes (-want +got):\n%s", diff)
			}
		})
	}
}
