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

// A TrainJob's JobSet is never queued on its own: the queue-name label
// Kueue's JobSet webhook gave it (a default LocalQueue) goes, and so do
// the suspension it came with when its TrainJob runs and the MultiKueue
// managedBy when that queue dispatches. A JobSet that only claims a
// TrainJob (another UID, none) keeps Kueue's queueing, and so does one of
// a TrainJob dispatched to a MultiKueue worker (it has no JobSet here).
func TestATrainJobsJobSetIsNeverQueuedOnItsOwn(t *testing.T) {
	defaulted := map[string]string{constants.QueueLabel: "default", "team": "a"}
	given := map[string]string{"team": "a"}
	for name, tc := range map[string]struct {
		edit          func(*family)
		wantLabels    map[string]string
		wantSuspend   bool
		wantManagedBy string
	}{
		"queued TrainJob":                      {edit: func(f *family) { f.trainJob.Spec.Suspend = ptr.To(true) }, wantLabels: given, wantSuspend: true},
		"running TrainJob, suspended by Kueue": {wantLabels: given},
		"dispatched by a default queue to MultiKueue": {edit: func(f *family) {
			f.jobSet.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
		}, wantLabels: given},
		"no queue label: nothing to do": {edit: func(f *family) { f.jobSet.Labels = given }, wantLabels: given, wantSuspend: true},
		"a TrainJob's name, another UID": {edit: func(f *family) {
			f.jobSet.OwnerReferences[0].UID = "forged"
			f.jobSet.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
		}, wantLabels: defaulted, wantSuspend: true, wantManagedBy: kueue.MultiKueueControllerName},
		"a TrainJob that does not exist": {edit: func(f *family) { f.trainJob.Name = "other" }, wantLabels: defaulted, wantSuspend: true},
		"a JobSet of its own":            {edit: func(f *family) { f.jobSet.OwnerReferences = nil }, wantLabels: defaulted, wantSuspend: true},
		"owned by another kind": {edit: func(f *family) { f.jobSet.OwnerReferences[0].Kind = "Notebook" },
			wantLabels: defaulted, wantSuspend: true},
		"its TrainJob runs on a MultiKueue worker": {edit: func(f *family) {
			f.trainJob.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName)
		}, wantLabels: defaulted, wantSuspend: true},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFamily()
			f.jobSet.Labels = map[string]string{constants.QueueLabel: "default", "team": "a"}
			f.jobSet.Spec.Suspend = ptr.To(true)
			if tc.edit != nil {
				tc.edit(&f)
			}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(f.trainJob).Build()
			js := f.jobSet.DeepCopy()
			if err := (&JobSets{lineage: lineage{cached: c, live: c}}).Default(t.Context(), js); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantLabels, js.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if got := ptr.Deref(js.Spec.Suspend, false); got != tc.wantSuspend {
				t.Errorf("suspend %v, want %v", got, tc.wantSuspend)
			}
			if got := ptr.Deref(js.Spec.ManagedBy, ""); got != tc.wantManagedBy {
				t.Errorf("managedBy %q, want %q", got, tc.wantManagedBy)
			}
		})
	}
}
