package trainjob

import (
	"testing"

	"sigs.k8s.io/kueue/pkg/controller/constants"
)

func TestTheCopiedQueueLabelIsKueues(t *testing.T) {
	if queueLabel != constants.QueueLabel {
		t.Errorf("queueLabel = %q, Kueue's is %q", queueLabel, constants.QueueLabel)
	}
	j := &TrainJob{}
	if j.QueueLabelCopied() {
		t.Error("a job without spec.labels has the label copied")
	}
	j.Spec.Labels = map[string]string{"team": "a", constants.QueueLabel: "lq"}
	if !j.QueueLabelCopied() {
		t.Error("the copied label is not seen")
	}
}
