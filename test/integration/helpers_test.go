package integration_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	testpoll "github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

const (
	timeout = 30 * time.Second
	gpu     = fixtures.GPU
)

// eventually retries f until it succeeds or the timeout passes.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	testpoll.Eventually(t, timeout, what, f)
}

// consistently checks f keeps succeeding for a while.
func consistently(t *testing.T, what string, d time.Duration, f func() error) {
	t.Helper()
	testpoll.Consistently(t, d, what, f)
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tj-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		// Trainer's webhook reads runtimes from its informer cache, which
		// may not have seen a runtime created a moment ago: that refusal
		// alone is tried again, any other ends the test.
		var err error
		_ = testpoll.Until(5*time.Second, func() error {
			err = k8s.Create(ctx, o)
			if err != nil && strings.Contains(err.Error(), "must be created before the TrainJob") {
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func queue(t *testing.T, ns string, pools ...pool) string {
	t.Helper()
	lq, err := queueE(ns, pools...)
	if err != nil {
		t.Fatal(err)
	}
	return lq
}

func everything() labels.Selector { return labels.Everything() }

// queueE sets up a flavor per pool, a ClusterQueue named after ns (tests
// share no cluster-scoped objects) and LocalQueue "lq", and waits until the
// ClusterQueue is active.
func queueE(ns string, pools ...pool) (string, error) {
	flavors, cq, lq := fixtures.Queue(ns, ns, pools...)
	for _, rf := range flavors {
		if err := k8s.Create(ctx, rf); err != nil {
			return "", err
		}
	}
	if err := k8s.Create(ctx, cq); err != nil {
		return "", err
	}
	if err := k8s.Create(ctx, lq); err != nil {
		return "", err
	}
	return lq.Name, poll(func() error {
		var got kueue.ClusterQueue
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cq), &got); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(got.Status.Conditions, kueue.ClusterQueueActive) {
			return fmt.Errorf("ClusterQueue %s not active: %v", cq.Name, got.Status.Conditions)
		}
		return nil
	})
}

// Builders shared with the e2e tier.
type (
	role = fixtures.Role
	pool = fixtures.Pool
)

var (
	trainingRuntime = fixtures.TrainingRuntime
	torchPolicy     = fixtures.TorchPolicy
	mpiPolicy       = fixtures.MPIPolicy
	trainJob        = fixtures.TrainJob
	withLimits      = fixtures.WithLimits
	gpus            = fixtures.GPUs
	cpus            = fixtures.CPUs
)

func getTrainJob(t *testing.T, tj *trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	got := &trainer.TrainJob{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func waitRunning(t *testing.T, tj *trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	var got *trainer.TrainJob
	eventually(t, "TrainJob "+tj.Name+" unsuspended", func() error {
		got = &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
			return err
		}
		if ptr.Deref(got.Spec.Suspend, false) {
			return fmt.Errorf("still suspended")
		}
		return nil
	})
	return got
}

func jobSetOf(t *testing.T, tj *trainer.TrainJob) *jobsetapi.JobSet {
	t.Helper()
	js := &jobsetapi.JobSet{}
	eventually(t, "JobSet of "+tj.Name, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), js); err != nil {
			return err
		}
		if ptr.Deref(js.Spec.Suspend, false) {
			return fmt.Errorf("JobSet still suspended")
		}
		return nil
	})
	return js
}

func replicatedJob(js *jobsetapi.JobSet, name string) *jobsetapi.ReplicatedJob {
	for i := range js.Spec.ReplicatedJobs {
		if js.Spec.ReplicatedJobs[i].Name == name {
			return &js.Spec.ReplicatedJobs[i]
		}
	}
	return nil
}

// setJobsStatus plays the Job controller for the child Jobs of a role:
// active pods while running, succeeded once done.
func setJobsStatus(t *testing.T, ns, jobSet, rjName string, active, succeeded int32) {
	t.Helper()
	eventually(t, "status of Jobs "+rjName, func() error {
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{
			jobsetapi.JobSetNameKey: jobSet, jobsetapi.ReplicatedJobNameKey: rjName,
		}); err != nil {
			return err
		}
		if len(jobs.Items) == 0 {
			return fmt.Errorf("no Jobs yet")
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			now := metav1.Now()
			j.Status.Active = active
			j.Status.Ready = ptr.To(active)
			j.Status.Succeeded = succeeded
			if j.Status.StartTime == nil {
				j.Status.StartTime = &now
			}
			if succeeded > 0 {
				j.Status.CompletionTime = &now
				j.Status.Conditions = []batchv1.JobCondition{
					{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
				}
			}
			if err := k8s.Status().Update(ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
}

func hasEvent(t *testing.T, obj client.Object, reason, contains string) error {
	t.Helper()
	return fixtures.EventOn(ctx, k8s, obj, reason, contains)
}

func notFound(err error) bool { return apierrors.IsNotFound(err) }
