package integration

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/trainjob-kueue/trainjob-kueue/saidonce"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Every event goes through speak: an action's event each time it is
// taken, a warning once per subject and text when it has one.
func TestSpeak(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "job-1"}}
	for name, tc := range map[string]struct {
		said []utterance
		want int
	}{
		"an action's event, twice":           {said: []utterance{normal(ReasonInjected, actionStart, "x"), normal(ReasonInjected, actionStart, "x")}, want: 2},
		"a warning without a subject, twice": {said: []utterance{warning(ReasonStopRefused, actionStop, "x"), warning(ReasonStopRefused, actionStop, "x")}, want: 2},
		"a warning once per Workload, twice": {said: []utterance{warning(ReasonStartRefused, actionStart, "x").once("wl"), warning(ReasonStartRefused, actionStart, "x").once("wl")}, want: 1},
		"the same warning of two Workloads":  {said: []utterance{warning(ReasonStartRefused, actionStart, "x").once("wl"), warning(ReasonStartRefused, actionStart, "x").once("wl-2")}, want: 2},
		"another text of the same warning":   {said: []utterance{warning(ReasonStartRefused, actionStart, "x").once("wl"), warning(ReasonStartRefused, actionStart, "y").once("wl")}, want: 2},
	} {
		t.Run(name, func(t *testing.T) {
			rec := events.NewFakeRecorder(8)
			d := &deps{recorder: rec, said: saidonce.New()}
			for _, u := range tc.said {
				d.speak(job, u)
			}
			if got := len(drain(rec)); got != tc.want {
				t.Errorf("%d events, want %d", got, tc.want)
			}
		})
	}
}

// A job whose runtime fails is told so once, not at every reconcile; a new
// problem is told again.
func TestARuntimeProblemIsSaidOncePerJob(t *testing.T) {
	rec := events.NewFakeRecorder(8)
	d := &deps{recorder: rec, said: saidonce.New()}
	job := trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "job-1"}}
	reconcile := func(reason, msg string) {
		t.Helper()
		adapter := &TrainJob{TrainJob: *job.DeepCopy(), deps: d}
		adapter.say(warning(reason, actionComputePodSets, msg))
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
