package standby

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/google/go-cmp/cmp"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Standing by for Kueue's built-in integration, a job it stopped loses our
// entries and gains that integration's marker; a running job, one whose
// pods still run, one out of Kueue and one MultiKueue runs are left alone.
func TestHandBackRemovesOurEntriesFromStoppedJobsAlone(t *testing.T) {
	v23 := shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{RuntimeSnapshot: true}}
	ours := trainjob.RuntimePatch{Manager: names.RuntimePatchManager, TrainingRuntimeSpec: &runtime.RawExtension{Raw: []byte(`{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"pool":"a"}}}}}}]}}}`)}}
	job := func(name string, edit func(*trainjob.TrainJob)) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Labels: map[string]string{constants.QueueLabel: "lq"}}}
		j.Spec.Suspend = ptr.To(true)
		j.Spec.RuntimePatches = []trainjob.RuntimePatch{ours}
		if edit != nil {
			edit(j)
		}
		return j
	}
	for name, tc := range map[string]struct {
		job       *trainjob.TrainJob
		manageAll bool
		managers  []string
	}{
		"stopped": {job: job("stopped", nil), managers: []string{names.InTreeRuntimePatchManager}},
		"stopped, unlabelled, Kueue manages jobs without a queue name": {job: job("unlabelled", func(j *trainjob.TrainJob) { j.Labels = nil }), manageAll: true,
			managers: []string{names.InTreeRuntimePatchManager}},
		"running": {job: job("running", func(j *trainjob.TrainJob) { j.Spec.Suspend = ptr.To(false) }), managers: []string{names.RuntimePatchManager}},
		"pods still running": {job: job("draining", func(j *trainjob.TrainJob) {
			j.Status.JobsStatus = []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1)}}
		}), managers: []string{names.RuntimePatchManager}},
		"out of Kueue": {job: job("unqueued", func(j *trainjob.TrainJob) { j.Labels = nil }), managers: []string{names.RuntimePatchManager}},
		"MultiKueue's": {job: job("dispatched", func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To(trainjob.MultiKueueControllerName) }), managers: []string{names.RuntimePatchManager}},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tc.job).WithStatusSubresource(&trainjob.TrainJob{}).Build()
			rec := events.NewFakeRecorder(4)
			h := NewHandBack(HandBackOptions{Client: c, Fresh: c, Recorder: rec, Shape: v23, ManageJobsWithoutQueueName: tc.manageAll})
			if _, err := h.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tc.job)}); err != nil {
				t.Fatal(err)
			}
			got := &trainjob.TrainJob{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(tc.job), got); err != nil {
				t.Fatal(err)
			}
			var managers []string
			for _, p := range got.Spec.RuntimePatches {
				managers = append(managers, p.Manager)
			}
			if len(managers) != len(tc.managers) || managers[0] != tc.managers[0] {
				t.Errorf("runtime patches of %v, want %v", managers, tc.managers)
			}
			if handed := len(rec.Events) > 0; handed != (tc.managers[0] == names.InTreeRuntimePatchManager) {
				t.Errorf("HandedBack event: %v", handed)
			}
		})
	}
}

// Standing by for Kueue v0.16's built-in integration (Trainer v2.1), the
// queue label its webhook copies into a queued job's spec.labels goes:
// once that integration is off, Kueue's JobSet integration would queue the
// job's JobSet a second time.
func TestHandBackDropsTheQueueLabelKueueCopiedIntoSpecLabels(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "queued", Labels: map[string]string{constants.QueueLabel: "lq"}}}
	job.Spec.Suspend = ptr.To(true)
	job.Spec.Labels = map[string]string{constants.QueueLabel: "lq", "team": "a"}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(job).Build()
	h := NewHandBack(HandBackOptions{Client: c, Fresh: c, Recorder: events.NewFakeRecorder(4), Shape: shape.PodTemplateOverrides{}})
	if _, err := h.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}); err != nil {
		t.Fatal(err)
	}
	got := &trainjob.TrainJob{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"team": "a"}, got.Spec.Labels); diff != "" {
		t.Errorf("spec.labels (-want +got):\n%s", diff)
	}
}

// The queue condition's write alone wakes no hand-back (standing by, the
// condition is still kept); a spec change or a resync does.
func TestHandBackIgnoresTheQueueConditionsWrite(t *testing.T) {
	job := func(rv string, suspended bool, told string) *trainjob.TrainJob {
		j := &trainjob.TrainJob{}
		j.Namespace, j.Name, j.ResourceVersion = "ns", "job", rv
		j.Spec.Suspend = ptr.To(suspended)
		if told != "" {
			j.Status.Conditions = []metav1.Condition{{Type: names.AdmittedCondition, Status: metav1.ConditionFalse, Reason: told}}
		}
		return j
	}
	for name, tc := range map[string]struct {
		old, new *trainjob.TrainJob
		want     bool
	}{
		"the condition written":       {old: job("1", true, ""), new: job("2", true, "Queued"), want: false},
		"the condition rewritten":     {old: job("1", true, "Queued"), new: job("2", true, "Evicted"), want: false},
		"suspended, with a condition": {old: job("1", false, "Queued"), new: job("2", true, "Evicted"), want: true},
		"a resync":                    {old: job("2", true, "Queued"), new: job("2", true, "Queued"), want: true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := notOnlyTold(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("notOnlyTold = %v, want %v", got, tc.want)
			}
		})
	}
}
