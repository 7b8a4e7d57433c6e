package e2e_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

var (
	eventually   = poll.Eventually
	consistently = poll.Consistently
)

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		eventually(t, 30*time.Second, "create "+o.GetName(), func() error {
			err := k8s.Create(ctx, o)
			// Webhooks read from informer caches that may lag a moment.
			if err != nil && fixtures.RuntimeNotCachedYet(err) {
				return err
			}
			if err != nil {
				t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
			}
			return nil
		})
	}
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// nodes creates count kwok nodes of pool p with gpus GPUs each, and waits
// until they are Ready.
func nodes(t *testing.T, prefix string, p fixtures.Pool, count int, gpus int64) {
	t.Helper()
	for i := range count {
		n := fixtures.Node(fmt.Sprintf("%s-%s-%d", prefix, p.Name, i), p, gpus)
		if err := localcluster.AddNode(ctx, k8s, n); err != nil {
			t.Fatal(err)
		}
	}
}

// queue creates the flavors, ClusterQueue and LocalQueue for pools.
func queue(t *testing.T, ns, name string, pools ...fixtures.Pool) string {
	t.Helper()
	flavors, cq, lq := fixtures.Queue(ns, name, pools...)
	for _, rf := range flavors {
		create(t, rf)
	}
	create(t, cq, lq)
	fixtures.WaitActive(t, ctx, k8s, cq.Name, 30*time.Second)
	return lq.Name
}

func getJob(t *testing.T, tj *trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	got := &trainer.TrainJob{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func condition(tj *trainer.TrainJob, cond string) bool {
	return apimeta.IsStatusConditionTrue(tj.Status.Conditions, cond)
}

func waitComplete(t *testing.T, tj *trainer.TrainJob, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, tj.Name+" complete", func() error {
		got := getJob(t, tj)
		if condition(got, trainer.TrainJobFailed) {
			t.Fatalf("%s failed: %v", tj.Name, got.Status.Conditions)
		}
		if !condition(got, trainer.TrainJobComplete) {
			return fmt.Errorf("conditions %v, jobs %v", got.Status.Conditions, got.Status.JobsStatus)
		}
		return nil
	})
}

// podsOf lists the pods of one role of a TrainJob.
func podsOf(t *testing.T, tj *trainer.TrainJob, role string) []corev1.Pod {
	t.Helper()
	pods, err := fixtures.PodsOf(ctx, k8s, tj, role)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

func hasToleration(pod *corev1.Pod, want corev1.Toleration) bool {
	return slices.ContainsFunc(pod.Spec.Tolerations, func(have corev1.Toleration) bool {
		return have.MatchToleration(&want) && have.Value == want.Value
	})
}

func suspended(tj *trainer.TrainJob) bool { return ptr.Deref(tj.Spec.Suspend, false) }

// userEntries is a user's override entry in the override field of the
// installed Trainer, with a field our Go types don't model.
func userEntries() (string, []any) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: "trainjobs.trainer.kubeflow.org"}, crd); err != nil {
		panic(err)
	}
	s, err := discovery.DetectShape(crd)
	if err != nil {
		panic(err)
	}
	labels := map[string]any{"team": "nlp"}
	if s.Name() == "spec.runtimePatches" {
		return "runtimePatches", []any{map[string]any{
			"manager": "platform.example.com/defaults",
			"trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{
				map[string]any{"name": "node", "template": map[string]any{"spec": map[string]any{"template": map[string]any{
					"metadata": map[string]any{"labels": labels}}}}},
			}}}},
		}}
	}
	if s.Name() == "spec.podSpecOverrides" {
		// No metadata in v2.0: the user's entry sets tolerations, which
		// replace the runtime's, so it keeps the one the nodes need.
		return "podSpecOverrides", []any{map[string]any{
			"targetJobs": []any{map[string]any{"name": "node"}},
			"tolerations": []any{
				map[string]any{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
				map[string]any{"key": "user-extra", "operator": "Exists"},
			},
		}}
	}
	return "podTemplateOverrides", []any{map[string]any{
		"targetJobs": []any{map[string]any{"name": "node"}},
		"metadata":   map[string]any{"labels": labels},
	}}
}
