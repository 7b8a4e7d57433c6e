package reliability_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

var (
	eventually   = poll.Eventually
	consistently = poll.Consistently
)

// runtimeToleration: every node of these tests is tainted dedicated=ml, so
// only pods that kept the runtime's toleration run. Each pool adds a taint
// of its own that only its flavor tolerates.
var runtimeToleration = corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule}

const poolLabel = "reliability.trainjob-kueue.dev/pool"

func gpuPool(ns, name string, gpus int64) fixtures.Pool {
	return fixtures.Pool{
		Name:   name,
		Labels: map[string]string{poolLabel: ns + "-" + name},
		Taints: []corev1.Toleration{{Key: poolLabel, Operator: corev1.TolerationOpEqual, Value: name, Effect: corev1.TaintEffectNoSchedule}},
		GPUs:   gpus,
	}
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rel-"}}
	eventually(t, time.Minute, "create a namespace", func() error { return k8s.Create(ctx, ns) })
	return ns.Name
}

// nodesOf creates count kwok nodes of pool p with gpus GPUs each, tainted
// for the runtime too.
func nodesOf(t *testing.T, ns string, p fixtures.Pool, count int, gpus int64) {
	t.Helper()
	tainted := p
	tainted.Taints = append([]corev1.Toleration{runtimeToleration}, p.Taints...)
	for i := range count {
		n := fixtures.Node(fmt.Sprintf("%s-%s-%d", ns, p.Name, i), tainted, gpus)
		if err := localcluster.AddNode(ctx, k8s, n); err != nil {
			t.Fatal(err)
		}
	}
}

// create creates objs, retrying while a webhook cannot answer (a component
// restarting) or reads a cache that has not seen a runtime yet; any other
// refusal fails t.
func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		eventually(t, 2*time.Minute, "create "+o.GetName(), func() error {
			err := k8s.Create(ctx, o)
			if err == nil {
				return nil
			}
			if transient(err) {
				return err
			}
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
			return nil
		})
	}
}

// transient: a refusal that says nothing about the object — a webhook that
// cannot be reached while its component restarts, an API server
// restarting, a cache a moment behind.
func transient(err error) bool {
	for _, s := range []string{"must be created before", "failed calling webhook", "connection refused", "EOF",
		"the server is currently unable", "context deadline exceeded", "http2: client connection lost", "no endpoints available"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// queue creates the flavors, ClusterQueue and LocalQueue "lq" for pools.
func queue(t *testing.T, ns string, pools ...fixtures.Pool) (string, *kueue.ClusterQueue) {
	t.Helper()
	flavors, cq, lq := fixtures.Queue(ns, ns, pools...)
	for _, rf := range flavors {
		create(t, rf)
	}
	create(t, cq, lq)
	fixtures.WaitActive(t, ctx, k8s, cq.Name, time.Minute)
	return lq.Name, cq
}

// torchRuntime is a runtime of one trainer role asking for gpus GPUs per
// node, whose pods run for run.
func torchRuntime(ns, name string, gpus int64, run time.Duration) *trainer.TrainingRuntime {
	return fixtures.TrainingRuntime(ns, name, fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(gpus), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(run)})
}

// userEntry is an entry of the user's in the installed Trainer's override
// field, with fields our Go types do not model, for role: what must
// survive every admission, eviction and crash exactly as written.
func userEntry(role, team string) any {
	labels := map[string]any{"team": team, "reliability.example.com/kept": "yes"}
	switch overrides {
	case "spec.runtimePatches":
		return map[string]any{
			"manager": "platform.example.com/defaults",
			"trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{
				map[string]any{"name": role, "template": map[string]any{"spec": map[string]any{"template": map[string]any{
					"metadata": map[string]any{"labels": labels}}}}},
			}}}},
		}
	default:
		return map[string]any{
			"targetJobs": []any{map[string]any{"name": role}},
			"metadata":   map[string]any{"labels": labels, "annotations": map[string]any{"reliability.example.com/note": "keep me"}},
		}
	}
}

// overrideField is the override field's name under spec.
func overrideField() string { return strings.TrimPrefix(overrides, "spec.") }

// withEntries is job as unstructured, with entries in the override field.
func withEntries(job *trainer.TrainJob, entries ...any) *unstructured.Unstructured {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	if err != nil {
		panic(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(trainer.GroupVersion.WithKind(trainer.TrainJobKind))
	if len(entries) > 0 {
		if err := unstructured.SetNestedSlice(u.Object, entries, "spec", overrideField()); err != nil {
			panic(err)
		}
	}
	return u
}

func getJob(t *testing.T, ns, name string) *trainer.TrainJob {
	t.Helper()
	got := &trainer.TrainJob{}
	eventually(t, time.Minute, "read TrainJob "+name, func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got)
	})
	return got
}

func complete(tj *trainer.TrainJob) bool {
	return apimeta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobComplete)
}

func waitComplete(t *testing.T, ns, name string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, name+" complete", func() error {
		got := &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got); err != nil {
			return err
		}
		if apimeta.IsStatusConditionTrue(got.Status.Conditions, trainer.TrainJobFailed) {
			return fmt.Errorf("%s failed: %v", name, got.Status.Conditions)
		}
		if !complete(got) {
			return fmt.Errorf("suspend=%v conditions %v", ptr.Deref(got.Spec.Suspend, false), got.Status.Conditions)
		}
		return nil
	})
}

// workloadsOf lists the Workloads a job owns.
func workloadsOf(t *testing.T, ns string, uid string) []kueue.Workload {
	t.Helper()
	var wls kueue.WorkloadList
	eventually(t, time.Minute, "list Workloads", func() error { return k8s.List(ctx, &wls, client.InNamespace(ns)) })
	var out []kueue.Workload
	for _, wl := range wls.Items {
		for _, o := range wl.OwnerReferences {
			if string(o.UID) == uid {
				out = append(out, wl)
			}
		}
	}
	return out
}

// eventOn is nil when obj has an event of reason whose message contains
// contains.
func eventOn(obj client.Object, reason, contains string) error {
	return fixtures.EventOn(ctx, k8s, obj, reason, contains)
}
