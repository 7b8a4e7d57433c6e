package forecast_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// A ClusterQueue of 16 GPUs, full: llm-1 (8 GPUs) reports 10 minutes
// left, sweep-2 (8) is expected to end in 4 from its runtime's history.
// Two 8-GPU jobs wait, each expected to run 20 minutes: the first starts
// when sweep-2 ends, the second when llm-1 does, after both.
func ExampleForecast() {
	now := time.Date(2026, 12, 7, 14, 0, 0, 0, time.Local)
	gpus := func(n int64) corev1.ResourceList {
		return corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(n, resource.DecimalSI)}
	}
	cq := &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a"},
		Spec: kueue.ClusterQueueSpec{ResourceGroups: []kueue.ResourceGroup{{
			CoveredResources: []corev1.ResourceName{"nvidia.com/gpu"},
			Flavors:          []kueue.FlavorQuotas{{Name: "a100", Resources: []kueue.ResourceQuota{{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("16")}}}},
		}}},
		Status: kueue.ClusterQueueStatus{FlavorsReservation: []kueue.FlavorUsage{{
			Name: "a100", Resources: []kueue.ResourceUsage{{Name: "nvidia.com/gpu", Total: resource.MustParse("16")}},
		}}},
	}
	node := func() []podsets.Role {
		return []podsets.Role{{Name: "node", Replicas: 1, PodsPerReplica: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "node", Resources: corev1.ResourceRequirements{Requests: gpus(8)}}},
		}}}}
	}
	starts := forecast.Forecast(forecast.Plan{
		Queue: &forecast.Queue{ClusterQueue: cq, Flavors: map[string]*kueue.ResourceFlavor{"a100": {ObjectMeta: metav1.ObjectMeta{Name: "a100"}}}},
		Running: []forecast.Running{
			{Job: "ml/llm-1", Uses: map[string]corev1.ResourceList{"a100": gpus(8)}, End: now.Add(10 * time.Minute), From: forecast.FromReported},
			{Job: "ml/sweep-2", Uses: map[string]corev1.ResourceList{"a100": gpus(8)}, End: now.Add(4 * time.Minute), From: forecast.FromHistory},
		},
		Waiting: []forecast.Waiting{
			{Job: "ml/next", Roles: node(), Runs: 20 * time.Minute, From: forecast.FromHistory},
			{Job: "ml/after", Roles: node(), Runs: 20 * time.Minute, From: forecast.FromHistory},
		},
		Now: now,
	})
	for _, job := range []string{"ml/next", "ml/after"} {
		fmt.Printf("%s: %s\n", job, forecast.Expected(starts[job], now).Sentence())
	}
	// Output:
	// ml/next: at 14:04, in about 4m, once ml/sweep-2 (4m left, from its runtime's history) finishes
	// ml/after: at 14:10, in about 10m, once ml/sweep-2 (4m left, from its runtime's history) and ml/llm-1 (10m left, reported) finish
}
