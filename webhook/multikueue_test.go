package webhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestAdmissionChecksOf(t *testing.T) {
	cq := &kueue.ClusterQueue{Spec: kueue.ClusterQueueSpec{AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{
		AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: "prov"}, {Name: "mk"}},
	}}}
	if diff := cmp.Diff([]string{"prov", "mk"}, admissionChecksOf(cq)); diff != "" {
		t.Error(diff)
	}
	if got := admissionChecksOf(&kueue.ClusterQueue{}); len(got) != 0 {
		t.Errorf("no strategy: %v", got)
	}
}

// A job on a queue whose ClusterQueue dispatches: refused when Kueue does
// not let MultiKueue dispatch TrainJobs through us, accepted when it does;
// standing by for Kueue's built-in integration, which dispatches TrainJobs
// with its own adapter (Kueue refuses TrainJob in externalFrameworks then),
// the job is that integration's to judge, never refused by ours.
func TestADispatchingQueueIsJudgedByTheIntegrationThatRunsTheJob(t *testing.T) {
	objs := []client.Object{
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "dispatch"}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "dispatch"}, Spec: kueue.ClusterQueueSpec{AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{
			AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: "mk"}}}}},
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "mk"}, Spec: kueue.AdmissionCheckSpec{ControllerName: kueue.MultiKueueControllerName}},
	}
	for name, tc := range map[string]struct {
		multiKueue, standby bool
		managedBy           *string
		refused             string
	}{
		"ours, TrainJob not in externalFrameworks": {refused: "multiKueue.externalFrameworks"},
		"ours, TrainJob in externalFrameworks":     {multiKueue: true, managedBy: ptr.To(kueue.MultiKueueControllerName)},
		"standing by, the built-in adapter's":      {standby: true},
		"standing by, managedBy set by Kueue":      {standby: true, managedBy: ptr.To(kueue.MultiKueueControllerName)},
	} {
		t.Run(name, func(t *testing.T) {
			opts := settings.Shared{Shape: shape.PodTemplateOverrides{}}
			opts.MultiKueue, opts.BuiltInTrainJob = tc.multiKueue, tc.standby
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
			w := &Webhook{client: c, opts: opts}
			job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", Labels: map[string]string{constants.QueueLabel: "lq"}}}
			job.Spec.ManagedBy = tc.managedBy
			errs, err := w.validateDispatch(t.Context(), w.job(job))
			if err != nil {
				t.Fatal(err)
			}
			got := errs.ToAggregate()
			switch {
			case tc.refused == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tc.refused != "" && (got == nil || !strings.Contains(got.Error(), tc.refused)):
				t.Errorf("got %v, want a refusal naming %s", got, tc.refused)
			}
		})
	}
}

// A job on a dispatching queue is handed to MultiKueue by ours when Kueue
// lets MultiKueue dispatch TrainJobs through us, and standing by too (as
// Kueue's built-in webhook does, which may already be a no-op while we
// still stand by in a switch); with neither, and on a queue that does not
// dispatch, it keeps Trainer's managedBy.
func TestADispatchingQueueHandsTheJobToMultiKueue(t *testing.T) {
	objs := []client.Object{
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "dispatch"}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "here"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "local"}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "dispatch"}, Spec: kueue.ClusterQueueSpec{AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{
			AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: "mk"}}}}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "local"}},
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "mk"}, Spec: kueue.AdmissionCheckSpec{ControllerName: kueue.MultiKueueControllerName}},
	}
	trainers := "trainer.kubeflow.org/trainjob-controller"
	for name, tc := range map[string]struct {
		multiKueue, standby bool
		queue               string
		managedBy           *string
		want                *string
	}{
		"ours, dispatching":                    {multiKueue: true, queue: "lq", want: ptr.To(kueue.MultiKueueControllerName)},
		"standing by, dispatching":             {standby: true, queue: "lq", want: ptr.To(kueue.MultiKueueControllerName)},
		"standing by, Trainer's default":       {standby: true, queue: "lq", managedBy: &trainers, want: ptr.To(kueue.MultiKueueControllerName)},
		"Kueue does not dispatch TrainJobs":    {queue: "lq"},
		"standing by, a queue of this cluster": {standby: true, queue: "here"},
		"ours, another controller's job":       {multiKueue: true, queue: "lq", managedBy: ptr.To("example.com/other"), want: ptr.To("example.com/other")},
	} {
		t.Run(name, func(t *testing.T) {
			opts := settings.Shared{Shape: shape.PodTemplateOverrides{}}
			opts.MultiKueue, opts.BuiltInTrainJob = tc.multiKueue, tc.standby
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
			w := &Webhook{client: c, opts: opts}
			job := w.job(&trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", Labels: map[string]string{constants.QueueLabel: tc.queue}}})
			job.Spec.ManagedBy = tc.managedBy
			if err := w.defaultManagedBy(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil {
				want = tc.managedBy
			}
			if diff := cmp.Diff(want, job.Spec.ManagedBy); diff != "" {
				t.Errorf("spec.managedBy (-want +got):\n%s", diff)
			}
		})
	}
}
