package overview

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// GPUS counts the DRA devices of GPU classes a job's pods claim through
// ResourceClaimTemplates beside its extended resources; a NIC is no GPU.
func TestGPUsCountDRADevices(t *testing.T) {
	wl := workload("j", nil)
	wl.Spec.PodSets = []kueue.PodSet{{Name: "node", Count: 3, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		ResourceClaims: []corev1.PodResourceClaim{
			{Name: "gpus", ResourceClaimTemplateName: ptr.To("two-gpus")},
			{Name: "nic", ResourceClaimTemplateName: ptr.To("nic")},
		},
		Containers: []corev1.Container{{Name: "node", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}},
	}}}}
	templates := map[string]quota.Devices{"two-gpus": {"gpu.example.com": 2}, "nic": {"nic.example.com": 1}}
	if pods, gpus := booked(&wl, templates); pods != 3 || gpus != 9 {
		t.Errorf("%d pods, %d GPUs; want 3 pods of 1 extended GPU and 2 DRA GPUs: 9", pods, gpus)
	}
	if _, gpus := booked(&wl, nil); gpus != 3 {
		t.Errorf("templates unknown: %d GPUs, want the 3 extended ones", gpus)
	}
}

// The templates are listed once, and only when a Workload's pods claim
// through one.
func TestFetchListsClaimTemplatesOnlyForDRAJobs(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, kueue.AddToScheme, trainjob.AddToScheme, resourcev1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "two-gpus"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2}}}}}}}
	for name, claims := range map[string]bool{"no DRA job": false, "a DRA job": true} {
		t.Run(name, func(t *testing.T) {
			wl := workload("j", nil)
			wl.Namespace = "ns"
			wl.Spec.PodSets = []kueue.PodSet{{Name: "node", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node"}}}}}}
			if claims {
				wl.Spec.PodSets[0].Template.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: ptr.To("two-gpus")}}
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&wl, tmpl).
				WithIndex(&corev1.Pod{}, "status.phase", func(o client.Object) []string { return []string{string(o.(*corev1.Pod).Status.Phase)} }).Build()
			in, _, err := Fetch(t.Context(), c, nil, Options{}, now)
			if err != nil {
				t.Fatal(err)
			}
			if got := in.ClaimTemplates["ns"]["two-gpus"]; claims != (got != nil) {
				t.Errorf("templates %v read, want read %v", in.ClaimTemplates, claims)
			}
		})
	}
}
