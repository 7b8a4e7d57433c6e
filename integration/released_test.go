package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A job whose Workload is finished: the reconcile that finds Kueue's
// finalizer still on it takes it off and says FinishedWorkload; once it is
// off, a reconcile (Trainer's last status writes, our own finalizer
// removal) neither writes nor says anything again.
func TestAReleasedJobIsNotReconciledAgain(t *testing.T) {
	const ns = "ns"
	for name, tc := range map[string]struct {
		finalizer  bool
		wantWrites []string
		wantSaid   bool
	}{
		"the finalizer still on": {finalizer: true, wantWrites: []string{"update Workload"}, wantSaid: true},
		"released":               {},
	} {
		t.Run(name, func(t *testing.T) {
			job := queuedJob(ns)
			var writes []string
			count := func(verb string, obj client.Object) {
				kind := "Workload"
				if _, ok := obj.(*trainjob.TrainJob); ok {
					kind = "TrainJob"
				}
				writes = append(writes, verb+" "+kind)
			}
			b := fake.NewClientBuilder().WithScheme(scheme.New()).
				WithObjects(job, torchRuntime(ns, corev1.ResourceRequirements{}), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}).
				WithStatusSubresource(&kueue.Workload{}, &trainjob.TrainJob{}).
				WithInterceptorFuncs(interceptor.Funcs{
					Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
						count("update", obj)
						return c.Update(ctx, obj, opts...)
					},
					Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
						count("patch", obj)
						return c.Patch(ctx, obj, p, opts...)
					},
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
						count("patch status", obj)
						return c.SubResource(sub).Patch(ctx, obj, p, opts...)
					},
				})
			if err := SetupIndexes(t.Context(), fakeIndexer{b}); err != nil {
				t.Fatal(err)
			}
			c := b.Build()
			rec := events.NewFakeRecorder(16)
			r := NewReconciler(c, c, rec, Options{Shared: settings.Shared{Shape: shape.PodTemplateOverrides{}}})
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}
			if _, err := r.Reconcile(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			// The job ran and completed; Kueue's Workload says so.
			wl := ownedWorkload(job, false)
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(wl), wl); err != nil {
				t.Fatalf("the job's Workload: %v", err)
			}
			wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: kueue.WorkloadFinishedReasonSucceeded, LastTransitionTime: metav1.Now()}}
			if err := c.Status().Update(t.Context(), wl); err != nil {
				t.Fatal(err)
			}
			if !tc.finalizer {
				wl.Finalizers = nil
				if err := c.Update(t.Context(), wl); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Get(t.Context(), req.NamespacedName, job); err != nil {
				t.Fatal(err)
			}
			job.Spec.Suspend = ptr.To(false)
			if err := c.Update(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			job.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue, Reason: "Done", LastTransitionTime: metav1.Now()}}
			if err := c.Status().Update(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			writes = nil
			drain(rec)

			if _, err := r.Reconcile(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantWrites, writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			said := strings.Join(drain(rec), "\n")
			if got := strings.Contains(said, "FinishedWorkload"); got != tc.wantSaid {
				t.Errorf("events %q; FinishedWorkload said: %v, want %v", said, got, tc.wantSaid)
			}
		})
	}
}

// released: finished, its quota given back, and the job not being deleted
// (the job framework finalizes that one).
func TestReleased(t *testing.T) {
	finished := []metav1.Condition{{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue}}
	for name, tc := range map[string]struct {
		conds     []metav1.Condition
		finalizer bool
		deleted   bool
		none      bool
		want      bool
	}{
		"finished, released":                  {conds: finished, want: true},
		"finished, its finalizer still on":    {conds: finished, finalizer: true},
		"finished, released, the job deleted": {conds: finished, deleted: true},
		"not finished":                        {},
		"no Workload":                         {none: true},
		"finished False":                      {conds: []metav1.Condition{{Type: kueue.WorkloadFinished, Status: metav1.ConditionFalse}}},
	} {
		t.Run(name, func(t *testing.T) {
			job := queuedJob("ns")
			if tc.deleted {
				job.DeletionTimestamp = &metav1.Time{Time: metav1.Now().Time}
			}
			var wl *kueue.Workload
			if !tc.none {
				wl = ownedWorkload(job, false)
				wl.Status.Conditions = tc.conds
				if tc.finalizer {
					wl.Finalizers = []string{kueue.ResourceInUseFinalizerName}
				}
			}
			if got := released(job, wl); got != tc.want {
				t.Errorf("released: %v, want %v", got, tc.want)
			}
		})
	}
}
