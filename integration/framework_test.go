package integration

import (
	"testing"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// Kueue's process reports LocalQueue metrics; the job framework's cache in
// ours holds no queues, so it must not look one up (and log an error) for
// every job that starts.
func TestTheFrameworkLooksUpNoLocalQueueForMetrics(t *testing.T) {
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, prefix+" "+args) }, funcr.Options{})
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "trainjob-a"},
		Spec:       kueue.WorkloadSpec{QueueName: "lq"},
		Status:     kueue.WorkloadStatus{Admission: &kueue.Admission{ClusterQueue: "cq"}},
	}
	c := frameworkCache(fake.NewClientBuilder().WithScheme(scheme.New()).Build())
	if c.ShouldExposeLocalQueueMetricsForWorkload(log, wl) {
		t.Error("the framework would report LocalQueue metrics Kueue reports")
	}
	if len(logged) > 0 {
		t.Errorf("asking logged %q", logged)
	}
}
