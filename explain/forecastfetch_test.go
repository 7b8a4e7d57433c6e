package explain

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// A ClusterQueue that is missing or inactive, or a LocalQueue that is
// inactive, takes nothing from the other queues' forecasts: its jobs are
// unknown, saying why, and every other job keeps its expected start.
func TestAQueueThatAdmitsNothingTakesNothingFromTheOthers(t *testing.T) {
	now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	inactiveCQ := fixtures.GPUQueue("cq-stopped", "", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"}))
	inactiveCQ.Status.Conditions = []metav1.Condition{{Type: kueue.ClusterQueueActive, Status: metav1.ConditionFalse, Reason: "Stopped", Message: "Can't admit new workloads; clusterQueue is stopped"}}
	// cq-a's status does not show running's reservation yet (Kueue writes
	// it a moment after it admits): the forecast books what the admitted
	// Workloads hold.
	c := fakeCluster(interceptor.Funcs{},
		fixtures.GPUQueue("cq-a", "", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"})),
		inactiveCQ, fixtures.ResourceFlavor("a100", nil))
	lq := func(name, cq string, active metav1.ConditionStatus) *kueue.LocalQueue {
		q := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}}
		q.Status.Conditions = []metav1.Condition{{Type: kueue.LocalQueueActive, Status: active, Reason: "Stopped", Message: "LocalQueue is stopped"}}
		return q
	}
	queued := func(name, lq string, ago time.Duration) kueue.Workload {
		wl := kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, CreationTimestamp: metav1.NewTime(now.Add(-ago))},
			Spec: kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(lq), MaximumExecutionTimeSeconds: ptr.To[int32](600),
				PodSets: []kueue.PodSet{{Name: "node", Count: 1, Template: fixtures.PodRole("node", 1, corev1.ResourceList{fixtures.GPU: resource.MustParse("8")}).Template}}}}
		return wl
	}
	running := queued("running", "team-a", time.Hour)
	running.Status.Admission = &kueue.Admission{ClusterQueue: "cq-a", PodSetAssignments: []kueue.PodSetAssignment{{Name: "node",
		Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{fixtures.GPU: "a100"}, ResourceUsage: corev1.ResourceList{fixtures.GPU: resource.MustParse("8")}}}}
	running.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}}
	s := Snapshot{
		Workloads: []kueue.Workload{running, queued("first", "team-a", 3*time.Minute), queued("second", "team-a", 2*time.Minute),
			queued("typo", "typo", 5*time.Minute), queued("paused", "paused", 5*time.Minute), queued("stopped", "stopped", 5*time.Minute)},
		LocalQueues: map[string]*kueue.LocalQueue{"ml/team-a": lq("team-a", "cq-a", metav1.ConditionTrue), "ml/typo": lq("typo", "cq-tpyo", metav1.ConditionTrue),
			"ml/paused": lq("paused", "cq-a", metav1.ConditionFalse), "ml/stopped": lq("stopped", "cq-stopped", metav1.ConditionTrue)},
	}
	e := &Explainer{Client: c, Now: func() time.Time { return now }}
	// The missing queue asked first: it used to end the forecast there.
	got := e.ForecastsFrom(context.Background(), s, []string{"cq-tpyo", "cq-stopped", "cq-a"})
	want := map[string]string{
		"ml/typo":    "its ClusterQueue cq-tpyo does not exist",
		"ml/stopped": "its ClusterQueue cq-stopped is inactive (Stopped: Can't admit new workloads; clusterQueue is stopped): nothing is admitted from it until it is active again",
		"ml/paused":  "its LocalQueue ml/paused is inactive (Stopped: LocalQueue is stopped): nothing is admitted from it until it is active again",
		// running ends 9 minutes from now (its 10-minute maximum), first
		// 10 minutes later, second 10 after that.
		"ml/first":  "in 9m0s",
		"ml/second": "in 19m0s",
	}
	said := map[string]string{}
	for job, start := range got {
		said[job] = start.Unknown
		if start.Known() {
			said[job] = "in " + start.At.Sub(now).String()
		}
	}
	if diff := cmp.Diff(want, said); diff != "" {
		t.Errorf("ForecastsFrom (-want +got):\n%s", diff)
	}
}
