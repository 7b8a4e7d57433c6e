package webhook

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Every kind a webhook reads on its way (a queued job on a dispatching
// queue, created; a TrainJob's JobSet, Job and pod, defaulted) is one a
// replica syncs before it says it is ready, standing by and not.
func TestTheWebhooksReadOnlyWhatAReplicaSyncsBeforeItIsReady(t *testing.T) {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "dispatch"}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "dispatch"}, Spec: kueue.ClusterQueueSpec{AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{
			AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: "mk"}}}}},
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "mk"}, Spec: kueue.AdmissionCheckSpec{ControllerName: kueue.MultiKueueControllerName}},
		&trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "torch"}},
		newFamily().trainJob,
	}
	for _, standby := range []bool{false, true} {
		t.Run(fmt.Sprintf("standing by: %v", standby), func(t *testing.T) {
			opts := settings.Shared{Shape: shape.PodTemplateOverrides{}}
			opts.MultiKueue, opts.BuiltInTrainJob = !standby, standby
			opts.ManagedJobsNamespaceSelector = labels.Everything()
			read := map[string]bool{}
			record := func(obj runtime.Object) {
				gvk, err := apiutil.GVKForObject(obj, scheme.New())
				if err != nil {
					t.Fatal(err)
				}
				read[strings.TrimSuffix(gvk.Kind, "List")] = true
			}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, o ...client.GetOption) error {
					record(obj)
					return c.Get(ctx, key, obj, o...)
				},
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, o ...client.ListOption) error {
					record(list)
					return c.List(ctx, list, o...)
				},
			}).Build()

			job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", Labels: map[string]string{constants.QueueLabel: "lq"}}}
			job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
			w := &Webhook{client: c, opts: opts}
			if err := w.Default(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			_, _ = w.ValidateCreate(t.Context(), job)
			// The children webhooks read their owners past the cache
			// (lineage.live): only what they read cached counts.
			f := newFamily()
			live := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(f.objects()...).Build()
			children := lineage{cached: c, live: live}
			js := f.jobSet.DeepCopy()
			js.Labels = map[string]string{constants.QueueLabel: "default"}
			if err := (&JobSets{lineage: children}).Default(t.Context(), js); err != nil {
				t.Fatal(err)
			}
			pod := f.pod.DeepCopy()
			pod.Labels["kueue.x-k8s.io/managed"] = "true"
			if err := (&Pods{lineage: children}).Default(t.Context(), pod); err != nil {
				t.Fatal(err)
			}

			synced := map[string]bool{}
			for _, o := range CachedReads() {
				gvk, err := apiutil.GVKForObject(o, scheme.New())
				if err != nil {
					t.Fatal(err)
				}
				synced[gvk.Kind] = true
			}
			for kind := range read {
				if !synced[kind] {
					t.Errorf("a webhook read %s, which a replica does not sync before it is ready (CachedReads)", kind)
				}
			}
			if len(read) == 0 {
				t.Fatal("no read recorded: the test exercises nothing")
			}
		})
	}
}
