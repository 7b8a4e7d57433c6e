package podsets

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestOutgrown(t *testing.T) {
	pod := func(cpu string, extra ...corev1.Container) corev1.PodTemplateSpec {
		c := corev1.Container{Name: NodeName, Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: append([]corev1.Container{c}, extra...)}}
	}
	role := func(name string, replicas, pods int32, tpl corev1.PodTemplateSpec) Role {
		return Role{Name: name, Replicas: replicas, PodsPerReplica: pods, Template: tpl}
	}
	built := func(name string, replicas, pods int32, tpl corev1.PodTemplateSpec) Built {
		return Built{Name: name, Replicas: replicas, PodsPerReplica: pods, Template: tpl}
	}
	sidecar := corev1.Container{Name: "trainer-added"}
	cases := map[string]struct {
		built []Built
		roles []Role
		want  string // "" or a part of the answer
	}{
		"as built": {
			built: []Built{built("init", 1, 1, pod("1")), built("node", 1, 2, pod("2"))},
			roles: []Role{role("init", 1, 1, pod("1")), role("node", 1, 2, pod("2"))},
		},
		"quantities spelled differently agree": {
			built: []Built{built("node", 1, 2, pod("1000m"))},
			roles: []Role{role("node", 1, 2, pod("1"))},
		},
		"a container only Trainer adds is not judged": {
			built: []Built{built("node", 1, 2, pod("1", sidecar))},
			roles: []Role{role("node", 1, 2, pod("1"))},
		},
		"parallelism 0 was built as 1": {
			built: []Built{built("node", 1, 1, pod("1"))},
			roles: []Role{role("node", 1, 1, pod("1"))},
		},
		"more nodes": {
			built: []Built{built("node", 1, 1, pod("1"))},
			roles: []Role{role("node", 1, 4, pod("1"))},
			want:  `replicatedJob "node" runs 1 pods in the JobSet, 4 now`,
		},
		"more replicas": {
			built: []Built{built("node", 1, 2, pod("1"))},
			roles: []Role{role("node", 2, 2, pod("1"))},
			want:  "runs 2 pods in the JobSet, 4 now",
		},
		"more cpu": {
			built: []Built{built("node", 1, 1, pod("1"))},
			roles: []Role{role("node", 1, 1, pod("3"))},
			want:  `container "node" asks for requests cpu=1 in the JobSet, requests cpu=3 now`,
		},
		"a limit added": {
			built: []Built{built("node", 1, 1, pod("1"))},
			roles: []Role{role("node", 1, 1, func() corev1.PodTemplateSpec {
				p := pod("1")
				p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
				return p
			}())},
			want: "limits nvidia.com/gpu=1 now",
		},
		"a new replicatedJob": {
			built: []Built{built("node", 1, 1, pod("1"))},
			roles: []Role{role("node", 1, 1, pod("1")), role("evaluator", 1, 1, pod("1"))},
			want:  `replicatedJob "evaluator" is not in the JobSet`,
		},
		"a replicatedJob removed": {
			built: []Built{built("init", 1, 1, pod("1")), built("node", 1, 1, pod("1"))},
			roles: []Role{role("node", 1, 1, pod("1"))},
			want:  `replicatedJob "init" is in the JobSet, and no longer in the runtime`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Outgrown(tc.built, tc.roles)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Outgrown = %q, want %q", got, tc.want)
			}
		})
	}
}
