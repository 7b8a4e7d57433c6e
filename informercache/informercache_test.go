package informercache

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestCacheKeepsOnlyWhatIsRead(t *testing.T) {
	workload := func(owner *metav1.OwnerReference) *kueue.Workload {
		wl := &kueue.Workload{
			ObjectMeta: metav1.ObjectMeta{
				Name:          "w",
				Annotations:   map[string]string{corev1.LastAppliedConfigAnnotation: "{…}", "keep": "me"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kueue"}},
			},
			Spec:   kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: "node", Count: 2}}},
			Status: kueue.WorkloadStatus{Conditions: []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}},
		}
		if owner != nil {
			wl.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return wl
	}
	trainJob := &metav1.OwnerReference{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "j", Controller: ptr.To(true)}
	batchJob := &metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "j", Controller: ptr.To(true)}
	stripped := func(wl *kueue.Workload) *kueue.Workload {
		wl.ManagedFields = nil
		wl.Annotations = map[string]string{"keep": "me"}
		return wl
	}
	for name, c := range map[string]struct {
		in, want *kueue.Workload
	}{
		"a TrainJob's Workload keeps spec and status": {workload(trainJob), stripped(workload(trainJob))},
		"a prebuilt Workload (no controller) too":     {workload(nil), stripped(workload(nil))},
		"another job kind's Workload: metadata only": {workload(batchJob), func() *kueue.Workload {
			wl := stripped(workload(batchJob))
			wl.Spec, wl.Status = kueue.WorkloadSpec{}, kueue.WorkloadStatus{}
			return wl
		}()},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := stripUnread(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("cached (-want +got):\n%s", diff)
			}
		})
	}
	// Anything else loses managedFields only.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}}}
	got, _ := stripUnread(ns)
	if diff := cmp.Diff(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "b"}}}, got); diff != "" {
		t.Errorf("Namespace (-want +got):\n%s", diff)
	}
}

func TestCacheHoldsOnlyTheTrainJobCRD(t *testing.T) {
	for obj, by := range Options().ByObject {
		if _, ok := obj.(*apiextensionsv1.CustomResourceDefinition); !ok {
			continue
		}
		if by.Field == nil || !by.Field.Matches(fields.Set{"metadata.name": "trainjobs.trainer.kubeflow.org"}) || by.Field.Matches(fields.Set{"metadata.name": "jobsets.jobset.x-k8s.io"}) {
			t.Fatalf("CRDs cached with field selector %v", by.Field)
		}
		return
	}
	t.Fatal("every CRD is cached")
}

func TestCachedWorkloadsShareEqualPodSets(t *testing.T) {
	transform := Options().DefaultTransform
	workload := func(name, image string) *kueue.Workload {
		return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{{
			Name: "node", Count: 2,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: image}}}},
		}}}}
	}
	cached := func(wl *kueue.Workload) *kueue.Workload {
		got, err := transform(wl)
		if err != nil {
			t.Fatal(err)
		}
		return got.(*kueue.Workload)
	}
	a, b, other := cached(workload("a", "torch")), cached(workload("b", "torch")), cached(workload("c", "mpi"))
	if &a.Spec.PodSets[0] != &b.Spec.PodSets[0] {
		t.Error("Workloads with equal PodSets hold a copy each")
	}
	if &a.Spec.PodSets[0] == &other.Spec.PodSets[0] || other.Spec.PodSets[0].Template.Spec.Containers[0].Image != "mpi" {
		t.Error("Workloads with different PodSets share them")
	}
	// What a reader gets is its own: the cache deep-copies.
	mine := b.DeepCopy()
	mine.Spec.PodSets[0].Count = 9
	if a.Spec.PodSets[0].Count != 2 {
		t.Error("a reader's change reached another cached Workload")
	}
}

// The queued jobs of one runtime hold equal resource requests, child-job
// counts and condition texts: the cache keeps one copy of each.
func TestCachedJobsShareWhatTheyHoldEqual(t *testing.T) {
	transform := Options().DefaultTransform
	cached := func(obj any) any {
		got, err := transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	pending := func(msg string) []metav1.Condition {
		// Each its own copy of the text, as decoded from a watch event.
		return []metav1.Condition{{Type: string([]byte(kueue.WorkloadQuotaReserved)), Reason: string([]byte("Pending")), Message: string([]byte(msg))}}
	}
	workload := func(name, gpus, msg string) *kueue.Workload {
		return cached(&kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: kueue.WorkloadStatus{
			ResourceRequests: []kueue.PodSetRequest{{Name: "node", Resources: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}}},
			Conditions:       pending(msg),
		}}).(*kueue.Workload)
	}
	a, b, other := workload("a", "2", "no GPU quota"), workload("b", "2", "no GPU quota"), workload("c", "4", "no quota at all")
	if &a.Status.ResourceRequests[0] != &b.Status.ResourceRequests[0] {
		t.Error("Workloads with equal resource requests hold a copy each")
	}
	if &a.Status.ResourceRequests[0] == &other.Status.ResourceRequests[0] || other.Status.ResourceRequests[0].Resources.Name("nvidia.com/gpu", resource.DecimalSI).Value() != 4 {
		t.Error("Workloads with different resource requests share them")
	}
	if unsafe.StringData(a.Status.Conditions[0].Message) != unsafe.StringData(b.Status.Conditions[0].Message) {
		t.Error("equal condition messages are kept twice")
	}
	if other.Status.Conditions[0].Message != "no quota at all" || a.Status.Conditions[0].Message != "no GPU quota" {
		t.Errorf("condition messages changed: %q, %q", a.Status.Conditions[0].Message, other.Status.Conditions[0].Message)
	}

	job := func(name string, suspended int32) *trainjob.TrainJob {
		return cached(&trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: trainjob.Status{
			JobsStatus: []trainer.JobStatus{{Name: "node", Suspended: ptr.To(suspended), Active: ptr.To[int32](0)}},
			Conditions: pending("TrainJob is suspended"),
		}}).(*trainjob.TrainJob)
	}
	x, y, running := job("x", 1), job("y", 1), job("z", 0)
	if &x.Status.JobsStatus[0] != &y.Status.JobsStatus[0] {
		t.Error("TrainJobs with equal child-job counts hold a copy each")
	}
	if &x.Status.JobsStatus[0] == &running.Status.JobsStatus[0] || *running.Status.JobsStatus[0].Suspended != 0 {
		t.Error("TrainJobs with different child-job counts share them")
	}
	if unsafe.StringData(x.Status.Conditions[0].Reason) != unsafe.StringData(y.Status.Conditions[0].Reason) {
		t.Error("equal condition reasons are kept twice")
	}
	// What a reader gets is its own: the cache deep-copies.
	mine := y.DeepCopy()
	*mine.Status.JobsStatus[0].Suspended = 0
	if *x.Status.JobsStatus[0].Suspended != 1 {
		t.Error("a reader's change reached another cached TrainJob")
	}
}

func TestInternerIsBounded(t *testing.T) {
	p := newInterner[kueue.PodSet](2)
	for i := range 5 {
		p.intern([]kueue.PodSet{{Name: kueue.PodSetReference(fmt.Sprint("role-", i)), Count: 1}})
	}
	if len(p.bySum) != 2 || len(p.order) != 2 {
		t.Errorf("%d PodSet lists kept, bound 2", len(p.bySum))
	}
}

// Of a training's metrics the cache keeps the checkpoint times a
// preemption-cost policy reads, and drops the rest.
func TestCachedJobsKeepOnlyTheirCheckpointMetrics(t *testing.T) {
	got, err := Options().DefaultTransform(&trainjob.TrainJob{Status: trainjob.Status{TrainerStatus: &trainer.TrainerStatus{
		ProgressPercentage: ptr.To[int32](40),
		Metrics:            []trainer.Metric{{Name: "loss", Value: "0.3"}, {Name: "last_checkpoint_unix_seconds", Value: "1764300000"}, {Name: "eval_accuracy", Value: "0.9"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := got.(*trainjob.TrainJob).Status.TrainerStatus
	if len(ts.Metrics) != 1 || ts.Metrics[0].Name != "last_checkpoint_unix_seconds" || *ts.ProgressPercentage != 40 {
		t.Errorf("cached trainer status %+v, want the progress and the checkpoint metric alone", ts)
	}
}
