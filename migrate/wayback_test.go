package migrate

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// The way back, as Kueue's built-in integration will take it: a running
// job whose Workload books other pods than that integration computes from
// the live runtime is stopped (the edited runtime named); one admitted
// but not started loses its place; a queued one is corrected in place;
// equivalent PodSets keep every job as it is.
func TestJudgeWayBackDecidesAsKueuesBuiltInIntegrationWill(t *testing.T) {
	booked := []kueue.PodSet{podSet("node", 2, "4")}
	edited := []kueue.PodSet{podSet("node", 4, "4")}
	job := func(running bool) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: "u", Labels: map[string]string{constants.QueueLabel: "lq"}}}
		j.Spec.Suspend = ptr.To(!running)
		j.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
		return j
	}
	wl := func(reserved bool) *kueue.Workload {
		w := &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: booked}}
		if reserved {
			w.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
			w.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
		}
		return w
	}
	for name, tc := range map[string]struct {
		j    Job
		want Decision
		says []string
	}{
		"running, its runtime as it started":            {j: Job{Job: job(true), Workload: wl(true), PodSets: booked}, want: Adopted},
		"running, its runtime edited since":             {j: Job{Job: job(true), Workload: wl(true), PodSets: edited}, want: Stopped, says: []string{"TrainingRuntime team/torch", "NoMatchingWorkload", "finished"}},
		"admitted, not started, its runtime edited":     {j: Job{Job: job(false), Workload: wl(true), PodSets: edited}, want: Recreated},
		"queued, its runtime edited":                    {j: Job{Job: job(false), Workload: wl(false), PodSets: edited}, want: CorrectedInPlace},
		"running, the built-in integration cannot tell": {j: Job{Job: job(true), Workload: wl(true), Err: errors.New("runtime 'torch' not found")}, want: Unknown, says: []string{"not found"}},
		"running without a reservation":                 {j: Job{Job: job(true), Workload: wl(false), PodSets: booked}, want: Stopped},
		"dispatched by MultiKueue: MultiKueue's to run": {j: Job{Job: func() *trainjob.TrainJob {
			j := job(true)
			j.Spec.ManagedBy = ptr.To(trainjob.MultiKueueControllerName)
			return j
		}(), Workload: wl(true)}, want: LeftAlone},
		"queued, no Workload yet": {j: Job{Job: job(false)}, want: NewWorkload},
	} {
		t.Run(name, func(t *testing.T) {
			v := JudgeWayBack(tc.j)
			if v.Decision != tc.want {
				t.Errorf("decision %q (%s), want %q", v.Decision, v.Reason, tc.want)
			}
			for _, s := range tc.says {
				if !strings.Contains(v.Reason, s) {
					t.Errorf("%q does not say %q", v.Reason, s)
				}
			}
			if v.StopsARunningJob() != (tc.want == Stopped) {
				t.Errorf("StopsARunningJob = %v", v.StopsARunningJob())
			}
		})
	}
}
