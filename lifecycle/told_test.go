package lifecycle

import (
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestOnlyToldChanged(t *testing.T) {
	told := func(status metav1.ConditionStatus, reason string) func(*trainjob.TrainJob) {
		return func(j *trainjob.TrainJob) {
			apimeta.SetStatusCondition(&j.Status.Conditions, metav1.Condition{Type: names.AdmittedCondition, Status: status, Reason: reason, Message: reason})
		}
	}
	rv := func(v string) func(*trainjob.TrainJob) { return func(j *trainjob.TrainJob) { j.ResourceVersion = v } }
	managed := func(j *trainjob.TrainJob) {
		j.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "trainjob-kueue", Subresource: "status"}}
	}
	// Trainer's condition as it is on both versions (trainerSays stamps
	// each with the time it is called).
	created := func(j *trainjob.TrainJob) {
		j.Status.Conditions = append(j.Status.Conditions, metav1.Condition{Type: "Created", Status: metav1.ConditionTrue, Reason: "JobSetCreated", LastTransitionTime: metav1.Unix(1, 0)})
	}
	for name, tc := range map[string]struct {
		old, job *trainjob.TrainJob
		want     bool
	}{
		"the condition written on a job without conditions": {
			old: job(rv("1")), job: job(rv("2"), told(metav1.ConditionFalse, "Queued"), managed), want: true,
		},
		"the condition written beside Trainer's": {
			old: job(rv("1"), created), job: job(rv("2"), created, told(metav1.ConditionFalse, "Queued")), want: true,
		},
		"the condition rewritten": {
			old: job(rv("1"), told(metav1.ConditionFalse, "Queued")), job: job(rv("2"), told(metav1.ConditionTrue, "Admitted")), want: true,
		},
		"a resync": {
			old: job(rv("1"), told(metav1.ConditionFalse, "Queued")), job: job(rv("1"), told(metav1.ConditionFalse, "Queued")),
		},
		"Trainer's condition written with ours": {
			old: job(rv("1")), job: job(rv("2"), trainerSays("Created", "made"), told(metav1.ConditionFalse, "Queued")),
		},
		"Trainer's condition alone": {
			old: job(rv("1"), told(metav1.ConditionFalse, "Queued")), job: job(rv("2"), told(metav1.ConditionFalse, "Queued"), trainerSays("Complete", "done")),
		},
		"the job started": {
			old: job(rv("1")), job: job(rv("2"), started, told(metav1.ConditionTrue, "Admitted")),
		},
		"a label changed": {
			old: job(rv("1")), job: job(rv("2"), func(j *trainjob.TrainJob) { j.Labels["team"] = "nlp" }),
		},
		"the job's Jobs reported": {
			old: job(rv("1")), job: job(rv("2"), func(j *trainjob.TrainJob) {
				j.Status.JobsStatus = append(j.Status.JobsStatus, trainer.JobStatus{Name: "node", Active: ptr.To[int32](1)})
			}),
		},
	} {
		t.Run(name, func(t *testing.T) {
			if got := OnlyToldChanged(tc.old, tc.job); got != tc.want {
				t.Errorf("OnlyToldChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
