package migrate

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func podSet(name string, count int32, gpus string) kueue.PodSet {
	return kueue.PodSet{Name: kueue.PodSetReference(name), Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "node", Image: "pytorch", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}}}},
	}}}
}

func TestJudgeDecidesAsKueuesJobFrameworkWill(t *testing.T) {
	v23 := shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{RuntimeSnapshot: true}}
	computed := []kueue.PodSet{podSet("dataset-initializer", 1, "0"), podSet("node", 2, "4")}
	queued := func(edit ...func(*trainjob.TrainJob)) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: "u", Labels: map[string]string{constants.QueueLabel: "lq"}}}
		j.Spec.Suspend = ptr.To(true)
		for _, e := range edit {
			e(j)
		}
		return j
	}
	running := func(j *trainjob.TrainJob) { j.Spec.Suspend = ptr.To(false) }
	filledByKueue := func(j *trainjob.TrainJob) {
		j.Spec.RuntimePatches = []trainjob.RuntimePatch{{Manager: names.InTreeRuntimePatchManager, TrainingRuntimeSpec: &runtime.RawExtension{
			Raw: []byte(`{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"pool":"a"}}}}}}]}}}`)}}}
	}
	workload := func(admitted bool, ps ...kueue.PodSet) *kueue.Workload {
		wl := &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: ps}}
		if admitted {
			wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
			wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
		}
		return wl
	}
	tolerating := func(ps kueue.PodSet) kueue.PodSet {
		ps.Template.Spec.Tolerations = []corev1.Toleration{{Key: "pool", Operator: corev1.TolerationOpExists}}
		return ps
	}
	for name, tc := range map[string]struct {
		job     *trainjob.TrainJob
		wl      *kueue.Workload
		err     error
		want    Decision
		state   string
		reason  string
		stopped bool
		// jobSetOff: Kueue's JobSet integration is known to be off.
		jobSetOff bool
	}{
		"finished": {job: queued(func(j *trainjob.TrainJob) {
			j.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
		}), wl: workload(true, computed...), want: LeftAlone, state: "Finished"},
		"MultiKueue's": {job: queued(func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To(trainjob.MultiKueueControllerName) }),
			wl: workload(false, computed...), want: LeftAlone, reason: "MultiKueue"},
		"not queued":                {job: queued(running, func(j *trainjob.TrainJob) { j.Labels = nil }), want: LeftAlone, state: "NotQueued"},
		"queued without a Workload": {job: queued(), want: NewWorkload, state: "Queued"},
		"queued, the same PodSets":  {job: queued(), wl: workload(false, computed...), want: Adopted, state: "Queued"},
		"running, with Kueue's entries": {job: queued(running, filledByKueue), wl: workload(true, computed...),
			want: AdoptedMendedAtNextStop, state: "Running", reason: "spec.runtimePatches[0].manager"},
		"running, PodSets named otherwise": {job: queued(running), wl: workload(true, podSet("init", 1, "0"), podSet("trainer", 2, "4")),
			want: Adopted, state: "Running"},
		"admitted: the flavor's tolerations are not compared": {job: queued(running),
			wl: workload(true, tolerating(computed[0]), tolerating(computed[1])), want: Adopted, state: "Running"},
		// A running job keeps the PodSets it was admitted with: Kueue keeps
		// its Workload, corrected at its next stop.
		"running, a count that disagrees": {job: queued(running), wl: workload(true, computed[0], podSet("node", 3, "4")),
			want: AdoptedMendedAtNextStop, state: "Running", reason: "PodSet 1 (node): 3 pods in its Workload, 2 by Trainer's rules"},
		"running, requests that disagree": {job: queued(running), wl: workload(true, computed[0], podSet("node", 2, "8")),
			want: AdoptedMendedAtNextStop, state: "Running", reason: "container node requests nvidia.com/gpu=8 in its Workload, nvidia.com/gpu=4"},
		"running, PodSets in another order": {job: queued(running), wl: workload(true, computed[1], computed[0]),
			want: AdoptedMendedAtNextStop, state: "Running", reason: "PodSet 0 (node in its Workload, dataset-initializer by Trainer's rules)"},
		"running without a quota reservation": {job: queued(running), wl: workload(false, computed...),
			want: Stopped, state: "Running", reason: "no quota reservation", stopped: true},
		"admitted, not started, a count that disagrees": {job: queued(), wl: workload(true, computed[0], podSet("node", 3, "4")),
			want: Recreated, state: "Admitted", reason: "3 pods in its Workload, 2 by Trainer's rules"},
		"admitted, not started, the same pods": {job: queued(), wl: workload(true, computed...), want: Adopted, state: "Admitted"},
		"queued, a count that disagrees": {job: queued(), wl: workload(false, computed[0], podSet("node", 3, "4")),
			want: CorrectedInPlace, state: "Queued", reason: "it keeps its place"},
		"queued, a PodSet too many": {job: queued(), wl: workload(false, append(computed, podSet("extra", 1, "0"))...),
			want: CorrectedInPlace, reason: "its Workload has 3 PodSets (dataset-initializer, node, extra), Trainer runs 2"},
		"running, its runtime gone": {job: queued(running), wl: workload(true, computed...), err: errors.New("runtime torch not found"),
			want: Adopted, state: "Running", reason: "runtime torch not found"},
		// Kueue v0.16 copied the queue label onto the job's JobSet.
		"running, the queue label copied": {job: queued(running, func(j *trainjob.TrainJob) { j.Spec.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "lq"} }),
			wl: workload(true, computed...), want: Stopped, state: "Running", reason: "JobSet integration", stopped: true},
		"running, the queue label copied, Kueue's JobSet integration off": {job: queued(running, func(j *trainjob.TrainJob) { j.Spec.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "lq"} }),
			wl: workload(true, computed...), jobSetOff: true, want: AdoptedMendedAtNextStop, state: "Running", reason: "keep Kueue's JobSet integration off"},
		"queued, the queue label copied": {job: queued(func(j *trainjob.TrainJob) { j.Spec.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "lq"} }),
			wl: workload(false, computed...), want: AdoptedMendedAtNextStop, state: "Queued", reason: "copied into spec.labels goes"},
		"queued, its runtime gone": {job: queued(), wl: workload(false, computed...), err: errors.New("runtime torch not found"),
			want: Unknown, state: "Queued", reason: "waits for its runtime"},
	} {
		t.Run(name, func(t *testing.T) {
			j := Job{Job: tc.job, Workload: tc.wl, Err: tc.err}
			if tc.wl != nil && tc.err == nil {
				j.PodSets = computed
			}
			got := Judge(j, v23, !tc.jobSetOff)
			if got.Decision != tc.want {
				t.Errorf("decision %q (%s), want %q", got.Decision, got.Reason, tc.want)
			}
			if tc.state != "" && string(got.State) != tc.state {
				t.Errorf("state %q, want %q", got.State, tc.state)
			}
			if !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("reason %q, want it to say %q", got.Reason, tc.reason)
			}
			if got.StopsARunningJob() != tc.stopped {
				t.Errorf("stops a running job: %v, want %v", got.StopsARunningJob(), tc.stopped)
			}
		})
	}
}
