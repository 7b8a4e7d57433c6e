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
// has the start say so where the runtime gives less, on every release;
// the start writes no grace (JobSet would refuse it, and the job would
// hold its quota, never started) and starts the job.
func TestTheStartSaysWhereThePodsGetLessGraceThanTheNoticePromises(t *testing.T) {
	const promise = `{"notice":{"seconds":60,"terminationGraceSeconds":120}}`
	v23 := shape.RuntimePatches{UnsuspendsInOnePatch: true}
	for name, tc := range map[string]struct {
		shape    shape.Shape
		policy   string
		podSpec  corev1.PodSpec
		wantSaid bool
	}{
		"v2.3, the runtime's 30 s: said": {shape: v23, policy: promise, wantSaid: true},
		"v2.1, the runtime's 30 s: said": {shape: shape.PodTemplateOverrides{}, policy: promise, wantSaid: true},
		"the runtime's 300 s":            {shape: v23, policy: promise, podSpec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](300)}},
		"a notice promising no grace":    {shape: v23, policy: `{"notice":{"seconds":60}}`},
		"a queue without a notice":       {shape: v23},
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
			if written := strings.Join(*f.writes, "\n"); strings.Contains(written, "terminationGracePeriodSeconds") {
				t.Errorf("the start wrote a grace, which JobSet refuses: %s", written)
			}
			said := 0
			for _, e := range drain(f.events) {
				if strings.Contains(e, ReasonTerminationGraceShort) && strings.Contains(e, "terminationGracePeriodSeconds: 120") {
					said++
				}
			}
			if want := map[bool]int{true: 1}[tc.wantSaid]; said != want {
				t.Errorf("said %d times; want %d", said, want)
			}
		})
	}
}
