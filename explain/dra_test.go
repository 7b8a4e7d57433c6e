package explain

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// draRuntime is torchRuntime whose node pods also claim 2 devices of
// gpu.example.com through the ResourceClaimTemplate template.
func draRuntime(template string) client.Object {
	rt := torchRuntime(2, "0")
	pod := &rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	pod.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	pod.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: ptr.To(template)}}
	return rt
}

func twoGPUs() *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "two-gpus"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2},
		}}}}}}
}

// explain shows a role's DRA devices per pod and in all, and, once Kueue
// counted them for the Workload, the quota resource they count as, in the
// role's requests; a missing template is named. The templates are listed
// only for a job that claims through one.
func TestExplainerShowsDRADevices(t *testing.T) {
	admitted := func() client.Object {
		wl := admittedWorkload(llamaWorkload())
		wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq-a", PodSetAssignments: []kueue.PodSetAssignment{{Name: "node",
			Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{"example.com/gpu": "a100"},
			ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), "example.com/gpu": resource.MustParse("4")}}}}
		return wl
	}
	for name, tc := range map[string]struct {
		objs    []client.Object
		wantDRA []DRADevices
		wantPer corev1.ResourceList
		missing []string
		says    string
		lists   int
	}{
		"admitted: counted as example.com/gpu": {objs: []client.Object{draRuntime("two-gpus"), twoGPUs(), admitted()}, lists: 1,
			wantDRA: []DRADevices{{Class: "gpu.example.com", PerPod: 2, Total: 4, CountedAs: "example.com/gpu"}},
			wantPer: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), "example.com/gpu": *resource.NewQuantity(2, resource.DecimalSI)},
			says:    "node claims 2 × gpu.example.com per pod, 4 in all, counted by Kueue as example.com/gpu"},
		"not counted by Kueue yet": {objs: []client.Object{draRuntime("two-gpus"), twoGPUs()}, lists: 1,
			wantDRA: []DRADevices{{Class: "gpu.example.com", PerPod: 2, Total: 4}},
			wantPer: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			says:    "not counted by Kueue yet"},
		"the template missing": {objs: []client.Object{draRuntime("no-such")}, lists: 1, missing: []string{"no-such"},
			wantPer: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			says:    "ResourceClaimTemplate no-such does not exist"},
		"no DRA: no list": {objs: []client.Object{torchRuntime(2, "1")}, wantPer: corev1.ResourceList{fixtures.GPU: resource.MustParse("1")}},
	} {
		t.Run(name, func(t *testing.T) {
			lists := 0
			c := fakeCluster(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*resourcev1.ResourceClaimTemplateList); ok {
					lists++
				}
				return c.List(ctx, list, opts...)
			}}, append(tc.objs, trainJobCRD("v2.3"), localQueue("cq-a"), a100Queue("research", "16"), fixtures.ResourceFlavor("a100", nil))...)
			ex, err := (&Explainer{Client: c}).Explain(t.Context(), llamaJob())
			if err != nil {
				t.Fatal(err)
			}
			if lists != tc.lists {
				t.Errorf("%d lists of ResourceClaimTemplates, want %d", lists, tc.lists)
			}
			role := ex.Roles[0]
			if diff := cmp.Diff(tc.wantDRA, role.DRA); diff != "" {
				t.Errorf("DRA (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPer, role.PerPod); diff != "" {
				t.Errorf("per pod (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.missing, ex.DRAMissing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			var out bytes.Buffer
			if err := ex.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			if tc.says != "" && !strings.Contains(out.String(), tc.says) {
				t.Errorf("explain does not say %q:\n%s", tc.says, out.String())
			}
		})
	}
}
