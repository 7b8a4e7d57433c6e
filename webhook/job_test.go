package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A Job of a TrainJob's JobSet is never queued on its own (Kueue's JobSet
// integration off, a default LocalQueue): the queue-name label Kueue's Job
// webhook gave it goes, and so does the suspension it came with when the
// TrainJob runs. The Jobs of other JobSets, Jobs of other owners, and
// every Job while Kueue's built-in integration runs are left as they are.
func TestATrainJobsJobIsNeverQueuedOnItsOwn(t *testing.T) {
	trainJob := func(suspended bool) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: "u"}}
		j.Spec.Suspend = ptr.To(suspended)
		return j
	}
	job := func(ownerKind string, suspended bool, labels map[string]string) *batchv1.Job {
		b := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j-node-0", Labels: labels}}
		b.Spec.Suspend = ptr.To(suspended)
		if ownerKind != "" {
			b.OwnerReferences = []metav1.OwnerReference{{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: ownerKind, Name: "j", UID: "js", Controller: ptr.To(true)}}
		}
		return b
	}
	defaulted := map[string]string{constants.QueueLabel: "default", "team": "a"}
	for name, tc := range map[string]struct {
		trainJob    *trainjob.TrainJob
		job         *batchv1.Job
		standby     bool
		wantLabels  map[string]string
		wantSuspend bool
	}{
		"running TrainJob, suspended by Kueue":     {trainJob: trainJob(false), job: job("JobSet", true, defaulted), wantLabels: map[string]string{"team": "a"}},
		"queued TrainJob: suspended as its JobSet": {trainJob: trainJob(true), job: job("JobSet", true, defaulted), wantLabels: map[string]string{"team": "a"}, wantSuspend: true},
		"no queue label: nothing to do":            {trainJob: trainJob(false), job: job("JobSet", true, map[string]string{"team": "a"}), wantLabels: map[string]string{"team": "a"}, wantSuspend: true},
		"a JobSet of its own: Kueue's to queue":    {job: job("JobSet", true, defaulted), wantLabels: defaulted, wantSuspend: true},
		"owned by another kind":                    {trainJob: trainJob(false), job: job("CronJob", true, defaulted), wantLabels: defaulted, wantSuspend: true},
		"no owner":                                 {trainJob: trainJob(false), job: job("", true, defaulted), wantLabels: defaulted, wantSuspend: true},
		"standing by: the built-in skips it":       {trainJob: trainJob(false), job: job("JobSet", true, defaulted), standby: true, wantLabels: defaulted, wantSuspend: true},
	} {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.New())
			if tc.trainJob != nil {
				b = b.WithObjects(tc.trainJob)
			}
			opts := integration.Options{}
			opts.BuiltInTrainJob = tc.standby
			w := &Jobs{client: b.Build(), opts: opts}
			got := tc.job.DeepCopy()
			if err := w.Default(t.Context(), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if s := ptr.Deref(got.Spec.Suspend, false); s != tc.wantSuspend {
				t.Errorf("suspend %v, want %v", s, tc.wantSuspend)
			}
		})
	}
}
