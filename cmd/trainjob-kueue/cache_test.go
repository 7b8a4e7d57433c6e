package main

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
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
	for obj, by := range cacheOptions().ByObject {
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
	transform := cacheOptions().DefaultTransform
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

func TestPodSetInternerIsBounded(t *testing.T) {
	p := newPodSetInterner(2)
	for i := range 5 {
		p.intern([]kueue.PodSet{{Name: kueue.PodSetReference(fmt.Sprint("role-", i)), Count: 1}})
	}
	if len(p.bySum) != 2 || len(p.order) != 2 {
		t.Errorf("%d PodSet lists kept, bound 2", len(p.bySum))
	}
}
