package integration

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// What we tell a job's owner goes one way: an utterance, spoken through
// deps.speak, which keeps the said-once rule. Warnings about the job's
// state are said once per subject and text: until Kueue's condition or the
// user's fix reaches our cache, the next reconcile finds the same and says
// nothing new. Events about an action we took (Injected, Restored, held,
// queued again) are said each time we take it.

// utterance is one event about a job.
type utterance struct {
	eventType string
	reason    string
	action    string
	msg       string
	// oncePer: said once per this subject (a Workload's UID, the job's)
	// and text; empty says it every time.
	oncePer types.UID
}

func warning(reason, action, msg string) utterance {
	return utterance{eventType: corev1.EventTypeWarning, reason: reason, action: action, msg: msg}
}

func normal(reason, action, msg string) utterance {
	return utterance{eventType: corev1.EventTypeNormal, reason: reason, action: action, msg: msg}
}

// once makes u said once per subject.
func (u utterance) once(subject types.UID) utterance {
	u.oncePer = subject
	return u
}

// speak records u about job, unless it was said before about its subject.
func (d *deps) speak(job *trainjob.TrainJob, u utterance) {
	if u.oncePer != "" && !d.said.First(u.oncePer, u.reason+": "+u.msg) {
		return
	}
	d.recorder.Eventf(job, nil, u.eventType, u.reason, u.action, "%s", u.msg)
}

// say keeps u for the end of the reconcile (tell), once per job: the job
// framework is not done with the job yet.
func (t *TrainJob) say(u utterance) {
	if u.oncePer == "" {
		u.oncePer = t.UID
	}
	t.notes = append(t.notes, u)
}

// tell speaks what the reconcile kept to say.
func (t *TrainJob) tell() {
	for _, u := range t.notes {
		t.deps.speak(&t.TrainJob, u)
	}
}
