package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// A ClusterQueue whose preemption notice promises the pods 120 s of grace
// gets it into the start's entry where Trainer takes it (v2.3) and the
// runtime gives less; a runtime that gives more keeps its own; a release
// that can't carry it starts the job with the runtime's and says so.
func TestTheStartRaisesThePodsGraceToTheNoticesPromise(t *testing.T) {
	v23 := shape.RuntimePatches{TerminationGrace: true, UnsuspendsInOnePatch: true}
	for name, tc := range map[string]struct {
		shape     shape.Shape
		policy    string
		podSpec   corev1.PodSpec
		wantGrace bool
		wantEvent string
	}{
		"v2.3, the runtime's 30 s":          {shape: v23, policy: `{"notice":{"seconds":60,"terminationGraceSeconds":120}}`, wantGrace: true},
		"v2.3, the runtime's 300 s":         {shape: v23, policy: `{"notice":{"seconds":60,"terminationGraceSeconds":120}}`, podSpec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](300)}},
		"v2.3, a notice promising no grace": {shape: v23, policy: `{"notice":{"seconds":60}}`},
		"v2.1, the runtime's 30 s: told":    {shape: shape.PodTemplateOverrides{}, policy: `{"notice":{"seconds":60,"terminationGraceSeconds":120}}`, wantEvent: "Warning " + ReasonTerminationGraceNotInjected},
		"v2.3, a queue without a notice":    {shape: v23},
	} {
		t.Run(name, func(t *testing.T) {
			f := newStartFixture(t, tc.shape, nil, tc.podSpec)
			cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}}
			if tc.policy != "" {
				cq.Annotations = map[string]string{names.PreemptionCostAnnotation: tc.policy}
			}
			if err := f.c.Create(t.Context(), cq); err != nil {
				t.Fatal(err)
			}
			if err := f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos); err != nil {
				t.Fatalf("start: %v", err)
			}
			if ptr.Deref(f.stored(t).Spec.Suspend, true) {
				t.Fatal("the job was not started")
			}
			written := strings.Join(*f.writes, "\n")
			if got := strings.Contains(written, `"terminationGracePeriodSeconds":120`); got != tc.wantGrace {
				t.Errorf("the grace written: %v; want %v (writes: %s)", got, tc.wantGrace, written)
			}
			var said []string
			for _, e := range drain(f.events) {
				if strings.Contains(e, ReasonTerminationGraceNotInjected) {
					said = append(said, "Warning "+ReasonTerminationGraceNotInjected)
				}
			}
			if want := []string{tc.wantEvent}; tc.wantEvent != "" && (len(said) != 1 || said[0] != tc.wantEvent) || tc.wantEvent == "" && len(said) != 0 {
				t.Errorf("said %v; want %v", said, want)
			}
		})
	}
}
