package priorityboost

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// A policy that does nothing is said on its ClusterQueue, naming the field
// or the gate and the fix, once per value of the policy.
func TestAnInactivePolicyIsSaidOnItsClusterQueue(t *testing.T) {
	for name, tc := range map[string]struct {
		policy  string
		gateOn  bool
		reason  string
		mention string
	}{
		"no policy":           {gateOn: true},
		"a policy that acts":  {policy: policy90, gateOn: true},
		"unparsable":          {policy: `progress: 10`, gateOn: true, reason: preemptcost.ReasonInvalidPolicy, mention: "not a policy"},
		"negative":            {policy: `{"progress":{"points":-5,"stepPercent":10}}`, gateOn: true, reason: preemptcost.ReasonInvalidPolicy, mention: "progress.points"},
		"overflowing int32":   {policy: `{"progress":{"points":2000000000,"stepPercent":10},"timeLeft":{"points":2000000000,"underSeconds":60}}`, gateOn: true, reason: preemptcost.ReasonInvalidPolicy, mention: "int32"},
		"Kueue's gate is off": {policy: policy90, reason: preemptcost.ReasonGateOff, mention: "featureGates: {PriorityBoost: true}"},
	} {
		t.Run(name, func(t *testing.T) {
			cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", UID: "cq"}}
			if tc.policy != "" {
				cq.Annotations = map[string]string{names.PreemptionCostAnnotation: tc.policy}
			}
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(cq).Build()
			rec := events.NewFakeRecorder(8)
			w := NewWarner(c, rec, tc.gateOn)
			for range 2 {
				if _, err := w.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cq)}); err != nil {
					t.Fatal(err)
				}
			}
			var said []string
			for len(rec.Events) > 0 {
				said = append(said, <-rec.Events)
			}
			if tc.reason == "" {
				if len(said) > 0 {
					t.Errorf("said %v of a policy that acts", said)
				}
				return
			}
			if len(said) != 1 || !strings.Contains(said[0], "Warning "+tc.reason) || !strings.Contains(said[0], tc.mention) {
				t.Errorf("said %v, want one Warning %s mentioning %q", said, tc.reason, tc.mention)
			}
		})
	}
}
