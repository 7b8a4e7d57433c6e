package trainjob

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// Finished reads Trainer's verdict on the job: done, and whether it
// succeeded, with Trainer's message.
func (j *TrainJob) Finished() (message string, success, finished bool) {
	if c := apimeta.FindStatusCondition(j.Status.Conditions, trainer.TrainJobComplete); c != nil && c.Status == metav1.ConditionTrue {
		return c.Message, true, true
	}
	if c := apimeta.FindStatusCondition(j.Status.Conditions, trainer.TrainJobFailed); c != nil && c.Status == metav1.ConditionTrue {
		return c.Message, false, true
	}
	return "", false, false
}

// Suspended: spec.suspend is true.
func (j *TrainJob) Suspended() bool { return j.Spec.Suspend != nil && *j.Spec.Suspend }
