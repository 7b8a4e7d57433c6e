package quota

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"
)

func TestTemplateDevicesCountsWhatKueueCounts(t *testing.T) {
	req := func(class string, mode resourcev1.DeviceAllocationMode, count int64) resourcev1.DeviceRequest {
		return resourcev1.DeviceRequest{Name: "r", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: mode, Count: count}}
	}
	spec := resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
		req("gpu.example.com", resourcev1.DeviceAllocationModeExactCount, 2),
		req("gpu.example.com", "", 0), // the API's defaults: exactly 1
		req("nic.example.com", resourcev1.DeviceAllocationModeExactCount, 1),
		req("gpu.example.com", resourcev1.DeviceAllocationModeAll, 0), // Kueue refuses to count it
		{Name: "either", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "a", DeviceClassName: "gpu.example.com"}}},
	}}}
	if diff := cmp.Diff(Devices{"gpu.example.com": 3, "nic.example.com": 1}, TemplateDevices(spec)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPodDevices(t *testing.T) {
	templates := map[string]Devices{"two-gpus": {"gpu.example.com": 2}, "nic": {"nic.example.com": 1}}
	spec := &corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{
		{Name: "a", ResourceClaimTemplateName: ptr.To("two-gpus")},
		{Name: "b", ResourceClaimTemplateName: ptr.To("nic")},
		{Name: "c", ResourceClaimTemplateName: ptr.To("gone")},
		{Name: "d", ResourceClaimName: ptr.To("shared")},
	}}
	got, missing := PodDevices(spec, templates)
	if diff := cmp.Diff(Devices{"gpu.example.com": 2, "nic.example.com": 1}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"gone"}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	if got.GPUs() != 2 {
		t.Errorf("GPUs = %d, want 2 (the NIC is no GPU)", got.GPUs())
	}
	if !ClaimsTemplates(spec) || ClaimsTemplates(&corev1.PodSpec{}) {
		t.Errorf("ClaimsTemplates")
	}
	if diff := cmp.Diff([]string{"gpu.example.com", "nic.example.com"}, got.Classes()); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	mig := Devices{"mig.nvidia.com": 3, "gpu.nvidia.com": 1}
	if mig.GPUs() != 4 {
		t.Errorf("MIG partitions and GPUs: %d, want 4", mig.GPUs())
	}
}
