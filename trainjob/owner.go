package trainjob

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// OwnerOf names the TrainJob that controls obj (a Workload, a JobSet); ""
// when another kind does, or nothing.
func OwnerOf(obj metav1.Object) string {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.Kind == GVK.Kind && ref.APIVersion == GVK.GroupVersion().String() {
			return ref.Name
		}
	}
	return ""
}
