package webhook

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A job created a moment after its namespace: Kueue's helpers read the
// namespace (managedJobsNamespaceSelector), and one the cache has not
// seen yet is asked of the API server, not answered "not found" (a create
// refused, seen under load).
func TestANamespaceTheCacheHasNotSeenYetIsAskedOfTheAPIServer(t *testing.T) {
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: string(constants.DefaultLocalQueueName)}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	opts := settings.Shared{Shape: shape.PodTemplateOverrides{}}
	opts.LocalQueueDefaulting = true
	opts.ManagedJobsNamespaceSelector = labels.Everything()
	w := &Webhook{
		client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(lq).Build(),
		live:   fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(lq, ns).Build(),
		opts:   opts,
	}
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j"}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	if err := w.Default(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	if got := job.Labels[constants.QueueLabel]; got != string(constants.DefaultLocalQueueName) {
		t.Errorf("queue %q, want the default", got)
	}
	if !ptr.Deref(job.Spec.Suspend, false) {
		t.Error("not suspended")
	}
}
