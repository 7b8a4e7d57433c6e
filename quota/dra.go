package quota

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
)

// Devices are DRA devices by DeviceClass name.
type Devices map[string]int64

// TemplateDevices are the devices a ResourceClaimTemplate's claim asks
// for, per DeviceClass, as Kueue counts them: each request of exactly a
// count of devices (the API's default allocation mode). What Kueue refuses
// to count (all devices of a class, a first-available choice) is left out;
// Kueue's own message on the Workload says so.
func TemplateDevices(spec resourcev1.ResourceClaimSpec) Devices {
	out := Devices{}
	for _, r := range spec.Devices.Requests {
		e := r.Exactly
		if e == nil || e.DeviceClassName == "" || (e.AllocationMode != "" && e.AllocationMode != resourcev1.DeviceAllocationModeExactCount) {
			continue
		}
		out[e.DeviceClassName] += max(e.Count, 1)
	}
	return out
}

// PodDevices are the devices one pod of spec claims through
// ResourceClaimTemplates (templates by name), and the templates it names
// that are not there. Claims of an existing ResourceClaim by name are not
// counted, as Kueue does not count them (podsets refuses them).
func PodDevices(spec *corev1.PodSpec, templates map[string]Devices) (Devices, []string) {
	out := Devices{}
	var missing []string
	for _, c := range spec.ResourceClaims {
		if c.ResourceClaimTemplateName == nil {
			continue
		}
		d, ok := templates[*c.ResourceClaimTemplateName]
		if !ok {
			missing = append(missing, *c.ResourceClaimTemplateName)
			continue
		}
		for class, n := range d {
			out[class] += n
		}
	}
	return out, missing
}

// ClaimsTemplates tells whether spec claims devices through
// ResourceClaimTemplates: only then are templates worth reading.
func ClaimsTemplates(spec *corev1.PodSpec) bool {
	return slices.ContainsFunc(spec.ResourceClaims, func(c corev1.PodResourceClaim) bool { return c.ResourceClaimTemplateName != nil })
}

// GPUs are the devices of d whose DeviceClass is a GPU's by its name
// (gpu.nvidia.com, mig.nvidia.com for MIG partitions, gpu.amd.com, …).
func (d Devices) GPUs() int64 {
	var n int64
	for class, count := range d {
		if strings.HasPrefix(class, "gpu.") || strings.HasPrefix(class, "mig.") {
			n += count
		}
	}
	return n
}

// Classes are d's DeviceClass names, sorted.
func (d Devices) Classes() []string { return slices.Sorted(maps.Keys(d)) }
