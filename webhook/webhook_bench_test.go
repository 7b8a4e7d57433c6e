package webhook

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// cachedObjects answers Gets the way the informer cache does: a deep copy of
// the stored object, no serialization. Any other call panics (the embedded
// nil client): the webhook's path makes none.
type cachedObjects struct {
	client.Client
	objs map[client.ObjectKey]client.Object
}

func (c cachedObjects) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	o, ok := c.objs[key]
	if !ok || fmt.Sprintf("%T", o) != fmt.Sprintf("%T", obj) {
		return fmt.Errorf("benchmark: no %T %s", obj, key)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(o.DeepCopyObject()).Elem())
	return nil
}

// BenchmarkWebhook is the TrainJob webhook's work for one job: defaulting
// and validating its create (the runtime read from the cache, its PodSets
// computed to judge it), and validating a user's update of it while it
// queues. No API call.
func BenchmarkWebhook(b *testing.B) {
	const ns = "team"
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torch"}}
	rt.Spec.MLPolicy = &trainer.MLPolicy{NumNodes: ptr.To[int32](4), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}}
	gpu := corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("16")}}
	rjob := func(name, ancestor string, r corev1.ResourceRequirements) jobsetapi.ReplicatedJob {
		j := jobsetapi.ReplicatedJob{Name: name, Replicas: 1}
		j.Template.Labels = map[string]string{podsets.AncestorLabel: ancestor}
		j.Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: name, Image: "x", Resources: r}}
		return j
	}
	init := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{
		rjob("dataset-initializer", podsets.AncestorDatasetInitializer, init),
		rjob("model-initializer", podsets.AncestorModelInitializer, init),
		rjob("node", podsets.AncestorTrainer, gpu),
	}
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}}
	managed := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kueue": "yes"}}}
	c := cachedObjects{objs: map[client.ObjectKey]client.Object{
		client.ObjectKeyFromObject(rt): rt, client.ObjectKeyFromObject(managed): managed, client.ObjectKeyFromObject(lq): lq, client.ObjectKeyFromObject(cq): cq,
	}}
	w := &Webhook{client: c, opts: settings.Shared{
		Shape: shape.PodTemplateOverrides{}, ManagerUsername: "system:serviceaccount:trainjob-kueue-system:trainjob-kueue",
		KueueSettings: discovery.KueueSettings{ManagedJobsNamespaceSelector: labels.SelectorFromSet(labels.Set{"kueue": "yes"})},
	}}
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", Labels: map[string]string{"kueue.x-k8s.io/queue-name": "lq"}}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	job.Spec.Trainer = &trainjob.Trainer{NumNodes: ptr.To[int32](8)}
	job.Spec.PodTemplateOverrides = []trainjob.PodTemplateOverride{{
		TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}},
		Spec:       &trainjob.PodTemplateSpecOverride{NodeSelector: map[string]string{"pool": "a100"}},
	}}
	job.Spec.Suspend = ptr.To(true)

	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			j := job.DeepCopy()
			j.Spec.Suspend = nil
			if err := w.Default(b.Context(), j); err != nil {
				b.Fatal(err)
			}
			if _, err := w.ValidateCreate(b.Context(), j); err != nil {
				b.Fatal(err)
			}
		}
	})
	ctx := admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UserInfo: authenticationv1.UserInfo{Username: "alice"}}})
	edited := job.DeepCopy()
	edited.Labels["team"] = "vision"
	b.Run("update", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.ValidateUpdate(ctx, job, edited); err != nil {
				b.Fatal(err)
			}
		}
	})
}
