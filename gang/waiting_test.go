package gang

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestWaitingGangsAreRetriedOnceWhenAnotherJobStops(t *testing.T) {
	w := newWaitingGangs()
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	w.set(a, true)
	w.set(b, true)
	w.set(b, false) // placed meanwhile
	if w.takeNow(a) {
		t.Errorf("retried now before any job stopped")
	}
	if diff := cmp.Diff([]types.NamespacedName{a}, w.now()); diff != "" {
		t.Errorf("enqueued (-want +got):\n%s", diff)
	}
	w.set(a, true) // still waiting: the mark stays
	if !w.takeNow(a) {
		t.Errorf("not retried now after a job stopped")
	}
	if w.takeNow(a) {
		t.Errorf("retried now twice for one stop")
	}
}

func TestStoppedRunning(t *testing.T) {
	job := func(suspend bool, cond string) *trainjob.TrainJob {
		j := &trainjob.TrainJob{}
		j.Spec.Suspend = ptr.To(suspend)
		if cond != "" {
			j.Status.Conditions = []metav1.Condition{{Type: cond, Status: metav1.ConditionTrue}}
		}
		return j
	}
	cases := map[string]struct {
		old, cur *trainjob.TrainJob
		want     bool
	}{
		"finished":          {old: job(false, ""), cur: job(false, trainer.TrainJobComplete), want: true},
		"failed":            {old: job(false, ""), cur: job(false, trainer.TrainJobFailed), want: true},
		"preempted":         {old: job(false, ""), cur: job(true, ""), want: true},
		"started":           {old: job(true, ""), cur: job(false, "")},
		"a status update":   {old: job(false, ""), cur: job(false, "")},
		"finished long ago": {old: job(false, trainer.TrainJobComplete), cur: job(false, trainer.TrainJobComplete)},
		"still queued":      {old: job(true, ""), cur: job(true, "")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := stoppedRunning(tc.old, tc.cur); got != tc.want {
				t.Errorf("stoppedRunning = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestAStopRetriesAFewWaitingGangsInTurn(t *testing.T) {
	w := newWaitingGangs()
	var all []types.NamespacedName
	for i := range 2*retryPerStop + 3 {
		job := types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("job-%02d", i)}
		all = append(all, job)
		w.set(job, true)
	}
	seen := map[types.NamespacedName]int{}
	for range 3 {
		got := w.now()
		if len(got) > retryPerStop {
			t.Fatalf("one stop retried %d waiting gangs, at most %d", len(got), retryPerStop)
		}
		for _, j := range got {
			seen[j]++
		}
	}
	// 19 waiting, 8 per stop: three stops reach every one, and none comes
	// twice before all came once (only the first 5 come again).
	for i, j := range all {
		want := 1
		if i < 3*retryPerStop-len(all) {
			want = 2
		}
		if seen[j] != want {
			t.Errorf("%s retried %d times over three stops, want %d: in turn", j.Name, seen[j], want)
		}
	}
	w.set(all[0], false)
	for range 3 {
		if slices.Contains(w.now(), all[0]) {
			t.Errorf("a placed gang was retried")
		}
	}
}
