package quota

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueequality "sigs.k8s.io/kueue/pkg/util/equality"
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

func TestKeepsReservation(t *testing.T) {
	ps := func(count int32, gpus string) []kueue.PodSet {
		return []kueue.PodSet{{Name: "node", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "node", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}}}},
		}}}}
	}
	for name, tc := range map[string]struct {
		computed []kueue.PodSet
		running  bool
		keeps    bool
	}{
		"running, the same":                 {computed: ps(2, "4"), running: true, keeps: true},
		"running, Trainer's rules disagree": {computed: ps(3, "4"), running: true, keeps: true},
		"not started, the same":             {computed: ps(2, "4"), keeps: true},
		"not started, another count":        {computed: ps(3, "4")},
		"not started, other requests":       {computed: ps(2, "8")},
	} {
		t.Run(name, func(t *testing.T) {
			if got := KeepsReservation(ps(2, "4"), tc.computed, tc.running); got != tc.keeps {
				t.Errorf("KeepsReservation = %v, want %v", got, tc.keeps)
			}
		})
	}
}

func TestEquivalentAndDifferenceAgree(t *testing.T) {
	node := func(count int32, gpus string, tolerations ...corev1.Toleration) kueue.PodSet {
		return kueue.PodSet{Name: "node", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Tolerations: tolerations,
			Containers: []corev1.Container{{Name: "node", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}}}},
		}}}
	}
	renamed := node(2, "4")
	renamed.Name = "trainer"
	flavor := corev1.Toleration{Key: "pool", Operator: corev1.TolerationOpExists}
	other := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists}
	withMin := func(ps kueue.PodSet, n int32) kueue.PodSet { ps.MinCount = ptr.To(n); return ps }
	withInit := func(ps kueue.PodSet) kueue.PodSet {
		ps.Template.Spec.InitContainers = []corev1.Container{{Name: "fetch"}}
		return ps
	}
	for name, tc := range map[string]struct {
		stored, computed []kueue.PodSet
		admitted         bool
		diff             string
	}{
		"the same":                            {stored: []kueue.PodSet{node(2, "4")}, computed: []kueue.PodSet{node(2, "4")}},
		"named otherwise":                     {stored: []kueue.PodSet{renamed}, computed: []kueue.PodSet{node(2, "4")}},
		"a flavor's toleration, admitted":     {stored: []kueue.PodSet{node(2, "4", flavor)}, computed: []kueue.PodSet{node(2, "4")}, admitted: true},
		"a flavor's toleration, not admitted": {stored: []kueue.PodSet{node(2, "4", flavor)}, computed: []kueue.PodSet{node(2, "4")}, diff: "tolerations differ"},
		"a count":                             {stored: []kueue.PodSet{node(3, "4")}, computed: []kueue.PodSet{node(2, "4")}, diff: "3 pods in its Workload, 2 by Trainer's rules"},
		"requests":                            {stored: []kueue.PodSet{node(2, "8")}, computed: []kueue.PodSet{node(2, "4")}, diff: "requests nvidia.com/gpu=8 in its Workload, nvidia.com/gpu=4"},
		"a minCount":                          {stored: []kueue.PodSet{withMin(node(2, "4"), 1)}, computed: []kueue.PodSet{node(2, "4")}, diff: "minCount differs"},
		"init containers":                     {stored: []kueue.PodSet{withInit(node(2, "4"))}, computed: []kueue.PodSet{node(2, "4")}, diff: "init containers differ"},
		"tolerations reordered, not admitted": {stored: []kueue.PodSet{node(2, "4", flavor, other)}, computed: []kueue.PodSet{node(2, "4", other, flavor)}, diff: "tolerations differ"},
		"a PodSet more":                       {stored: []kueue.PodSet{node(2, "4"), renamed}, computed: []kueue.PodSet{node(2, "4")}, diff: "2 PodSets (node, trainer), Trainer runs 1 (node)"},
	} {
		t.Run(name, func(t *testing.T) {
			eq := Equivalent(tc.computed, tc.stored, tc.admitted)
			// As Kueue's own test, which the job framework runs.
			var opts []kueueequality.ComparePodSetsOption
			if tc.admitted {
				opts = append(opts, kueueequality.WithIgnoreTolerations())
			}
			if kueue := kueueequality.ComparePodSetSlices(tc.computed, tc.stored, opts...); eq != kueue {
				t.Errorf("Equivalent = %v, Kueue's ComparePodSetSlices = %v", eq, kueue)
			}
			diff := Difference(tc.stored, tc.computed, tc.admitted)
			if eq != (tc.diff == "") || eq != (diff == "") {
				t.Fatalf("Equivalent = %v, Difference = %q, want difference %q", eq, diff, tc.diff)
			}
			if !strings.Contains(diff, tc.diff) {
				t.Errorf("Difference = %q, want it to say %q", diff, tc.diff)
			}
		})
	}
}
