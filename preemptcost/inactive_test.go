package preemptcost

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// A ClusterQueue's policy has no effect when it can't be read or Kueue's
// gate is off: the reason and a message naming the fix; none without a
// policy or with a good one under the gate.
func TestInactive(t *testing.T) {
	cq := func(policy string) *kueue.ClusterQueue {
		c := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}}
		if policy != "" {
			c.Annotations = map[string]string{names.PreemptionCostAnnotation: policy}
		}
		return c
	}
	for name, tc := range map[string]struct {
		cq      *kueue.ClusterQueue
		gateOn  bool
		reason  string
		mention string
	}{
		"no policy":                         {cq: cq(""), gateOn: false},
		"a good policy, gate on":            {cq: cq(Example), gateOn: true},
		"unreadable":                        {cq: cq(`progress: 10`), gateOn: true, reason: ReasonInvalidPolicy, mention: "until it is mended"},
		"a bad field":                       {cq: cq(`{"progress":{"points":-1,"stepPercent":10}}`), gateOn: true, reason: ReasonInvalidPolicy, mention: "progress.points"},
		"gate off":                          {cq: cq(Example), reason: ReasonGateOff, mention: "featureGates: {PriorityBoost: true}"},
		"a notice alone, gate off: it acts": {cq: cq(`{"notice":{"seconds":120}}`)},
		"a notice and a boost, gate off": {cq: cq(`{"notice":{"seconds":120},"minRunTime":{"points":10,"seconds":60}}`), reason: ReasonGateOff,
			mention: "its preemption notice acts without it"},
	} {
		t.Run(name, func(t *testing.T) {
			reason, msg := Inactive(tc.cq, tc.gateOn)
			if reason != tc.reason || !strings.Contains(msg, tc.mention) {
				t.Errorf("Inactive = %q, %q; want %q mentioning %q", reason, msg, tc.reason, tc.mention)
			}
		})
	}
}
