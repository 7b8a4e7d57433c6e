package explain

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A manifest not created yet is played forward as if created now: behind
// every job of its priority already waiting, ahead of those of lower
// priority, running as long as its maximum execution time says.
func TestAManifestStartsAsIfCreatedNow(t *testing.T) {
	now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	queued := func(name string, ago time.Duration, priority int32) *kueue.Workload {
		return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, CreationTimestamp: metav1.NewTime(now.Add(-ago))},
			Spec: kueue.WorkloadSpec{QueueName: "team-a", MaximumExecutionTimeSeconds: ptr.To[int32](600), Priority: ptr.To(priority),
				PodSets: []kueue.PodSet{{Name: "node", Count: 1, Template: fixtures.PodRole("node", 1, corev1.ResourceList{fixtures.GPU: resource.MustParse("8")}).Template}}}}
	}
	running := queued("running", time.Hour, 0)
	running.Status.Admission = &kueue.Admission{ClusterQueue: "cq-a", PodSetAssignments: []kueue.PodSetAssignment{{Name: "node",
		Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{fixtures.GPU: "a100"}, ResourceUsage: corev1.ResourceList{fixtures.GPU: resource.MustParse("8")}}}}
	running.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}}
	cq := fixtures.Reserving(fixtures.GPUQueue("cq-a", "", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"})), "a100", corev1.ResourceList{fixtures.GPU: resource.MustParse("8")})
	objs := []client.Object{cq, fixtures.ResourceFlavor("a100", nil), localQueue("cq-a"), running, queued("waiting", 2*time.Minute, 0), queued("low", 3*time.Minute, -10),
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "urgent"}, Value: 100}}
	for name, tc := range map[string]struct {
		labels map[string]string
		want   time.Duration
	}{
		// running ends in 9 minutes; waiting then runs 10, the manifest
		// after it; low waits behind both.
		"behind the jobs of its priority": {labels: map[string]string{constants.MaxExecTimeSecondsLabel: "600"}, want: 19 * time.Minute},
		"ahead of them with a higher priority class": {
			labels: map[string]string{constants.MaxExecTimeSecondsLabel: "600", constants.WorkloadPriorityClassLabel: "urgent"}, want: 9 * time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "plan", Labels: map[string]string{queueNameLabel: "team-a"}}}
			for k, v := range tc.labels {
				job.Labels[k] = v
			}
			e := &Explainer{Client: fakeCluster(interceptor.Funcs{}, objs...), Now: func() time.Time { return now }}
			q, err := e.clusterQueue(context.Background(), "cq-a")
			if err != nil {
				t.Fatal(err)
			}
			got, note := e.expected(context.Background(), q, job, []podsets.Role{fixtures.PodRole("node", 1, corev1.ResourceList{fixtures.GPU: resource.MustParse("8")})})
			if note != "" || got == nil || got.At == nil || !got.At.Equal(now.Add(tc.want)) {
				t.Fatalf("expected start %+v (note %q), want in %v", got, note, tc.want)
			}
		})
	}
}
