package quota_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func container(requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

// same compares resource lists by value, not by representation.
func same(t *testing.T, what string, want, got corev1.ResourceList) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	cases := map[string]struct {
		spec corev1.PodSpec
		want corev1.ResourceList
	}{
		"containers add up": {
			spec: corev1.PodSpec{Containers: []corev1.Container{container(list("cpu", "1"), nil), container(list("cpu", "500m", "nvidia.com/gpu", "2"), nil)}},
			want: list("cpu", "1500m", "nvidia.com/gpu", "2"),
		},
		"limits only: requests default to limits": {
			spec: corev1.PodSpec{Containers: []corev1.Container{container(nil, list("nvidia.com/gpu", "8", "memory", "1Gi"))}},
			want: list("nvidia.com/gpu", "8", "memory", "1Gi"),
		},
		"an init container bigger than the main ones sets the peak": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container(list("cpu", "4"), nil)},
				Containers:     []corev1.Container{container(list("cpu", "1"), nil)},
			},
			want: list("cpu", "4"),
		},
		"a sidecar runs next to the main containers": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{func() corev1.Container {
					c := container(list("cpu", "1"), nil)
					c.RestartPolicy = &always
					return c
				}()},
				Containers: []corev1.Container{container(list("cpu", "2"), nil)},
			},
			want: list("cpu", "3"),
		},
		"overhead is added": {
			spec: corev1.PodSpec{Overhead: list("cpu", "100m"), Containers: []corev1.Container{container(list("cpu", "1"), nil)}},
			want: list("cpu", "1100m"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			same(t, "pod requests", tc.want, quota.PodRequests(&tc.spec))
		})
	}
}

func role(name, ancestor string, replicas, perReplica int32, req corev1.ResourceList) podsets.Role {
	r := podsets.Role{Name: name, Ancestor: ancestor, Replicas: replicas, PodsPerReplica: perReplica}
	r.Template.Spec.Containers = []corev1.Container{container(req, nil)}
	return r
}

func TestUsage(t *testing.T) {
	roles := []podsets.Role{
		role("dataset-initializer", podsets.AncestorDatasetInitializer, 1, 1, list("cpu", "2")),
		role("model-initializer", podsets.AncestorModelInitializer, 1, 1, list("cpu", "1")),
		role("node", podsets.AncestorTrainer, 1, 4, list("cpu", "1", "nvidia.com/gpu", "8")),
		role("evaluator", "", 2, 1, list("cpu", "1")),
	}
	usage := quota.Usage(roles)
	if usage[2].Count != 4 {
		t.Errorf("node count %d, want 4", usage[2].Count)
	}
	same(t, "node total", list("cpu", "4", "nvidia.com/gpu", "32"), usage[2].Total)
	same(t, "job total", list("cpu", "9", "nvidia.com/gpu", "32"), quota.JobTotal(usage))

}
