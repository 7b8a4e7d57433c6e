package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// Kueue here runs with its PriorityBoost gate off (its default): a
// ClusterQueue's preemption-cost policy would do nothing, so the manager
// writes no boost, says so on the ClusterQueue, and explain says the
// policy is inactive and why.
func TestAPreemptionCostPolicyUnderKueuesGateOffIsSaidInactive(t *testing.T) {
	ns := namespace(t)
	pool := gpuPool(ns, "gpu", 4)
	nodesOf(t, ns, pool, 1, 4)
	lq := queue(t, ns, ns, pool)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, names.PreemptionCostAnnotation, `{"progress":{"points":800,"stepPercent":10}}`)
	if err := k8s.Patch(ctx, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(time.Hour)}))
	tj := fixtures.TrainJob(ns, "j", "torch", lq)
	create(t, tj)
	eventually(t, time.Minute, "the ClusterQueue told", func() error {
		return fixtures.EventOn(ctx, k8s, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: ns}}, preemptcost.ReasonGateOff, "PriorityBoost feature gate is off")
	})
	fixtures.WaitWorkload(t, ctx, k8s, tj) // explain speaks of a queued job's priority
	ex, err := (&explain.Explainer{Client: k8s}).Explain(ctx, fixtures.Ours(getJob(t, tj)))
	if err != nil {
		t.Fatal(err)
	}
	if ex.Priority == nil || !strings.Contains(ex.Priority.Inactive, "PriorityBoost feature gate is off") {
		t.Errorf("explain's priority %+v, want the policy said inactive for Kueue's gate", ex.Priority)
	}
	if _, boosted := fixtures.WaitWorkload(t, ctx, k8s, tj).Annotations[constants.PriorityBoostAnnotationKey]; boosted {
		t.Error("a boost was written that Kueue ignores")
	}
}
