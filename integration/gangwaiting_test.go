package integration

import (
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
