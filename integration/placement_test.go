package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestSamePlacement(t *testing.T) {
	base := func() []kueue.PodSet {
		return []kueue.PodSet{{Name: "node", Count: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"pool": "gpu"},
			Tolerations: []corev1.Toleration{
				{Key: "a", Operator: corev1.TolerationOpExists},
				{Key: "b", Operator: corev1.TolerationOpEqual, Value: "x", Effect: corev1.TaintEffectNoSchedule},
			},
		}}}}
	}
	cases := map[string]struct {
		edit func(*kueue.PodSet)
		same bool
	}{
		"unchanged": {edit: func(*kueue.PodSet) {}, same: true},
		"tolerations reordered": {edit: func(p *kueue.PodSet) {
			tol := p.Template.Spec.Tolerations
			tol[0], tol[1] = tol[1], tol[0]
		}, same: true},
		"a container's image": {edit: func(p *kueue.PodSet) {
			p.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "other"}}
		}, same: true},
		"nodeSelector": {edit: func(p *kueue.PodSet) { p.Template.Spec.NodeSelector["disk"] = "ssd" }},
		"a toleration": {edit: func(p *kueue.PodSet) {
			p.Template.Spec.Tolerations = p.Template.Spec.Tolerations[:1]
		}},
		"affinity": {edit: func(p *kueue.PodSet) {
			p.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
		}},
		"topology": {edit: func(p *kueue.PodSet) {
			p.TopologyRequest = &kueue.PodSetTopologyRequest{Required: ptr.To("rack")}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			edited := base()
			tc.edit(&edited[0])
			if got := samePlacement(base(), edited); got != tc.same {
				t.Errorf("samePlacement = %v, want %v", got, tc.same)
			}
		})
	}
}
