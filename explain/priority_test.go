package explain

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
)

// A job's priority under a preemption-cost policy: its boost and parts,
// who set it, and the ClusterQueue's admitted Workloads in the order a
// preemption picks victims.
func TestExplainPriority(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	admitted := func(name string, priority int32, boost string, admittedAt time.Time) kueue.Workload {
		wl := kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)}}
		wl.Spec.Priority = ptr.To(priority)
		if boost != "" {
			wl.Annotations = map[string]string{constants.PriorityBoostAnnotationKey: boost}
		}
		wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(admittedAt)}}
		return wl
	}
	b := admitted("b", 100, "720", at.Add(time.Minute))
	b.Annotations[names.PriorityBoostAnnotation] = `{"total":720,"progress":720,"preemptions":0,"timeLeft":0}`
	peers := []kueue.Workload{b, admitted("a", 100, "80", at), admitted("c", 100, "", at.Add(2*time.Minute)), admitted("d", 100, "", at.Add(3*time.Minute))}
	for name, tc := range map[string]struct {
		wl   *kueue.Workload
		in   *priorityInput
		want *priorityExplanation
	}{
		"no policy, no boost: nothing to say": {wl: &peers[2], in: &priorityInput{Admitted: peers}},
		"not read":                            {wl: &b},
		"ours, under a policy": {wl: &b, in: &priorityInput{Policy: `{"progress":{"points":800,"stepPercent":10}}`, Admitted: peers},
			want: &priorityExplanation{Base: 100, Boost: 720, Parts: &preemptcost.Boost{Total: 720, Progress: 720}, BoostBy: "trainjob-kueue", Effective: 820,
				Policy: `{"progress":{"points":800,"stepPercent":10}}`,
				// Equal priorities: the most recently admitted first.
				Candidates: []priorityPeer{{Workload: "ns/d", Effective: 100}, {Workload: "ns/c", Effective: 100}, {Workload: "ns/a", Effective: 180}, {Workload: "ns/b", Effective: 820, This: true}}}},
		"someone else's boost, no policy": {wl: &peers[1], in: &priorityInput{},
			want: &priorityExplanation{Base: 100, Boost: 80, BoostBy: "someone else (not trainjob-kueue)", Effective: 180}},
		"a policy Kueue ignores": {wl: &peers[2], in: &priorityInput{Policy: "{}", Inactive: "gate off"},
			want: &priorityExplanation{Base: 100, Effective: 100, Policy: "{}", Inactive: "gate off"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := explainPriority(tc.wl, tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got == nil {
				return
			}
			var out bytes.Buffer
			writePriority(&out, got)
			if !strings.Contains(out.String(), "Priority:") || (got.Inactive != "" && !strings.Contains(out.String(), got.Inactive)) {
				t.Errorf("rendered:\n%s", out.String())
			}
		})
	}
}
