package integration

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestSaidOnce(t *testing.T) {
	s := newSaidOnce()
	if !s.first("wl-1", ReasonStartRefused) || s.first("wl-1", ReasonStartRefused) {
		t.Error("the same refusal of the same Workload was not said exactly once")
	}
	if !s.first("wl-1", ReasonNoMultiKueueCheck) || !s.first("wl-2", ReasonStartRefused) {
		t.Error("another reason, or another Workload, was taken as said")
	}
	if !s.first("", ReasonStartRefused) || !s.first("", ReasonStartRefused) {
		t.Error("without a Workload to remember, a refusal must be said every time")
	}
}

// A job whose runtime fails is told so once, not at every reconcile; a new
// problem is told again.
func TestARuntimeProblemIsSaidOncePerJob(t *testing.T) {
	rec := events.NewFakeRecorder(8)
	d := &deps{recorder: rec, said: newSaidOnce()}
	job := trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "job-1"}}
	reconcile := func(reason, msg string) {
		t.Helper()
		adapter := &TrainJob{TrainJob: *job.DeepCopy(), deps: d}
		adapter.say(reason, actionComputePodSets, msg)
		adapter.tell()
	}
	reconcile(ReasonInvalidRuntime, "quantities must not be negative")
	reconcile(ReasonInvalidRuntime, "quantities must not be negative")
	if got := len(drain(rec)); got != 1 {
		t.Errorf("%d events for one problem seen twice, want 1", got)
	}
	reconcile(ReasonRuntimeNotFound, "runtime gone")
	if got := len(drain(rec)); got != 1 {
		t.Errorf("%d events for a new problem, want 1", got)
	}
}
