package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A TrainJob's JobSet is never queued on its own: the queue-name label
// Kueue's JobSet webhook gave it (a default LocalQueue) goes, and so does
// the suspension it came with when its TrainJob runs. Other JobSets, and
// every JobSet while Kueue's built-in integration runs (it skips them
// itself), are left as they are.
func TestATrainJobsJobSetIsNeverQueuedOnItsOwn(t *testing.T) {
	job := func(suspended bool) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: "u"}}
		j.Spec.Suspend = ptr.To(suspended)
		return j
	}
	jobSet := func(owner string, suspended bool, labels map[string]string) *jobsetapi.JobSet {
		js := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", Labels: labels}}
		js.Spec.Suspend = ptr.To(suspended)
		if owner != "" {
			js.OwnerReferences = []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: owner, Name: "j", UID: "u", Controller: ptr.To(true)}}
		}
		return js
	}
	defaulted := map[string]string{constants.QueueLabel: "default", "team": "a"}
	for name, tc := range map[string]struct {
		job         *trainjob.TrainJob
		js          *jobsetapi.JobSet
		standby     bool
		wantLabels  map[string]string
		wantSuspend bool
	}{
		"queued TrainJob, default queue given":  {job: job(true), js: jobSet("TrainJob", true, defaulted), wantLabels: map[string]string{"team": "a"}, wantSuspend: true},
		"running TrainJob, suspended by Kueue":  {job: job(false), js: jobSet("TrainJob", true, defaulted), wantLabels: map[string]string{"team": "a"}},
		"TrainJob not seen yet":                 {js: jobSet("TrainJob", true, defaulted), wantLabels: map[string]string{"team": "a"}, wantSuspend: true},
		"no queue label: nothing to do":         {job: job(false), js: jobSet("TrainJob", true, map[string]string{"team": "a"}), wantLabels: map[string]string{"team": "a"}, wantSuspend: true},
		"a JobSet of its own: Kueue's to queue": {js: jobSet("", true, defaulted), wantLabels: defaulted, wantSuspend: true},
		"owned by another kind":                 {js: jobSet("Notebook", true, defaulted), wantLabels: defaulted, wantSuspend: true},
		"standing by: the built-in skips it":    {job: job(false), js: jobSet("TrainJob", true, defaulted), standby: true, wantLabels: defaulted, wantSuspend: true},
	} {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.New())
			if tc.job != nil {
				b = b.WithObjects(tc.job)
			}
			opts := integration.Options{}
			opts.BuiltInTrainJob = tc.standby
			w := &JobSets{client: b.Build(), opts: opts}
			js := tc.js.DeepCopy()
			if err := w.Default(t.Context(), js); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantLabels, js.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if got := ptr.Deref(js.Spec.Suspend, false); got != tc.wantSuspend {
				t.Errorf("suspend %v, want %v", got, tc.wantSuspend)
			}
		})
	}
}
