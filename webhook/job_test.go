package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// A Job of a TrainJob's JobSet is never queued on its own (Kueue's JobSet
// integration off, a default LocalQueue): the queue-name label Kueue's Job
// webhook gave it goes, with the MultiKueue managedBy, and so does the
// suspension it came with when the TrainJob runs. A Job whose JobSet is
// not proven a TrainJob's, hop by hop by UID, is Kueue's.
func TestATrainJobsJobIsNeverQueuedOnItsOwn(t *testing.T) {
	defaulted := map[string]string{constants.QueueLabel: "default", "team": "a"}
	given := map[string]string{"team": "a"}
	for name, tc := range map[string]struct {
		edit          func(*family)
		wantLabels    map[string]string
		wantSuspend   bool
		wantManagedBy string
	}{
		"running TrainJob, suspended by Kueue":     {wantLabels: given},
		"queued TrainJob: suspended as its JobSet": {edit: func(f *family) { f.trainJob.Spec.Suspend = ptr.To(true) }, wantLabels: given, wantSuspend: true},
		"dispatched by a default queue to MultiKueue": {edit: func(f *family) {
			f.job.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
		}, wantLabels: given},
		"no queue label: nothing to do": {edit: func(f *family) { f.job.Labels = given }, wantLabels: given, wantSuspend: true},
		"the JobSet's name, another UID": {edit: func(f *family) { f.job.OwnerReferences[0].UID = "forged" },
			wantLabels: defaulted, wantSuspend: true},
		"a JobSet of its own": {edit: func(f *family) { f.jobSet.OwnerReferences = nil }, wantLabels: defaulted, wantSuspend: true},
		"a JobSet whose TrainJob has another UID": {edit: func(f *family) { f.jobSet.OwnerReferences[0].UID = "forged" },
			wantLabels: defaulted, wantSuspend: true},
		"a JobSet named as a TrainJob, no JobSet of that name": {edit: func(f *family) { f.jobSet.Name = "else" },
			wantLabels: defaulted, wantSuspend: true},
		"owned by another kind": {edit: func(f *family) { f.job.OwnerReferences[0].Kind = "CronJob" }, wantLabels: defaulted, wantSuspend: true},
		"no owner":              {edit: func(f *family) { f.job.OwnerReferences = nil }, wantLabels: defaulted, wantSuspend: true},
		"its TrainJob runs on a MultiKueue worker": {edit: func(f *family) {
			f.trainJob.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
		}, wantLabels: defaulted, wantSuspend: true},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFamily()
			f.job.Labels = map[string]string{constants.QueueLabel: "default", "team": "a"}
			f.job.Spec.Suspend = ptr.To(true)
			if tc.edit != nil {
				tc.edit(&f)
			}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(f.trainJob, f.jobSet).Build()
			got := f.job.DeepCopy()
			if err := (&Jobs{lineage: lineage{cached: c, live: c}}).Default(t.Context(), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if s := ptr.Deref(got.Spec.Suspend, false); s != tc.wantSuspend {
				t.Errorf("suspend %v, want %v", s, tc.wantSuspend)
			}
			if m := ptr.Deref(got.Spec.ManagedBy, ""); m != tc.wantManagedBy {
				t.Errorf("managedBy %q, want %q", m, tc.wantManagedBy)
			}
		})
	}
}
