package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/go-logr/logr/funcr"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// How a reconcile ends, through the job framework: a queued job gets its
// Workload; a read that fails is the reconcile's error (retried with
// backoff), never "nothing there"; a priority class that does not exist is
// said and looked for again later, without an error.
func TestReconcileEnds(t *testing.T) {
	const ns = "ns"
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", UID: "uid", Labels: map[string]string{constants.QueueLabel: "lq"}}}
	job.Spec.Suspend = ptr.To(true)
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torch"}}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "x"}}
	workloadReadFails := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*kueue.Workload); ok {
			return errors.New("etcd is on fire")
		}
		return c.Get(ctx, key, obj, opts...)
	}}
	for name, tc := range map[string]struct {
		labels       map[string]string
		funcs        interceptor.Funcs
		wantErr      string
		wantRequeue  bool
		wantWorkload bool
		wantEvent    string
	}{
		"queued: its Workload made": {wantWorkload: true},
		"the Workload read fails":   {funcs: workloadReadFails, wantErr: "etcd is on fire"},
		"a priority class to come":  {labels: map[string]string{constants.WorkloadPriorityClassLabel: "high"}, wantRequeue: true, wantEvent: ReasonPriorityClassNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			j := job.DeepCopy()
			for k, v := range tc.labels {
				j.Labels[k] = v
			}
			b := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(j, rt.DeepCopy(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}).WithInterceptorFuncs(tc.funcs).
				WithStatusSubresource(&kueue.Workload{}, &trainjob.TrainJob{})
			if err := SetupIndexes(t.Context(), fakeIndexer{b}); err != nil {
				t.Fatal(err)
			}
			c := b.Build()
			rec := events.NewFakeRecorder(16)
			r := NewReconciler(c, c, rec, Options{Shared: settings.Shared{Shape: shape.PodTemplateOverrides{}}})
			ctx := ctrl.LoggerInto(t.Context(), funcr.New(func(p, a string) { t.Log(p, a) }, funcr.Options{Verbosity: 9}))
			res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(j)})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := res.RequeueAfter == missingReferenceRetry; got != tc.wantRequeue {
				t.Errorf("requeued after %v, want %v: %v", res.RequeueAfter, missingReferenceRetry, tc.wantRequeue)
			}
			var wls kueue.WorkloadList
			if err := c.List(t.Context(), &wls); err != nil {
				t.Fatal(err)
			}
			if got := len(wls.Items) == 1; got != tc.wantWorkload {
				t.Errorf("Workloads %d, want one: %v", len(wls.Items), tc.wantWorkload)
			}
			got := drain(rec)
			if tc.wantEvent != "" && !strings.Contains(strings.Join(got, "\n"), tc.wantEvent) {
				t.Errorf("events %v, want %s", got, tc.wantEvent)
			}
		})
	}
}

// fakeIndexer registers the indexes of SetupIndexes with a fake client.
type fakeIndexer struct{ b *fake.ClientBuilder }

func (i fakeIndexer) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	i.b.WithIndex(obj, field, fn)
	return nil
}
