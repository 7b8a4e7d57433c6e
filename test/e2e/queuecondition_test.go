package e2e_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/overview"
)

// A job queued, held for its deleted runtime, admitted, preempted and
// admitted again, finished: our condition on the TrainJob says each in
// turn (kubectl wait --for=condition=trainjob-kueue.dev/Admitted returns
// once it is admitted), Trainer's own conditions are never taken away, and
// list, explain and the metric say the queued state in the condition's
// word.
func TestTheQueueConditionTellsEachStateInTurn(t *testing.T) {
	ns := namespace(t)
	p := gpuPool(ns, "cpu", 0)
	p.CPUs = "0" // no quota yet: the job waits
	nodesOf(t, ns, p, 1, 0)
	lq := queue(t, ns, ns, p)
	for name, value := range map[string]int32{ns + "-low": 10, ns + "-high": 1000} {
		create(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
	}
	tol := []corev1.Toleration{runtimeToleration}
	role := fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("2"), Tolerations: tol, Priority: ns + "-low", Annotations: fixtures.RunFor(30 * time.Second)}
	rt := fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1), role)
	create(t, rt, fixtures.TrainingRuntime(ns, "urgent", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("8"), Tolerations: tol, Priority: ns + "-high", Annotations: fixtures.RunFor(5 * time.Second)}))
	tj := fixtures.TrainJob(ns, "job", "torch", lq)
	create(t, tj)

	seen := watchCondition(t, tj)
	// Queued: the condition, list, explain and the metric in one word.
	eventually(t, time.Minute, "told queued", func() error { return conditionSays(tj, metav1.ConditionFalse, "Queued", "LocalQueue "+lq) })
	// kubectl get's STATE column (Trainer's CRD: the last condition's type)
	// stays Trainer's: never "…/Admitted" of a job that is queued.
	if state := kubectlGet(t, tj); strings.Contains(state, names.AdmittedCondition) {
		t.Errorf("kubectl get trainjob says %q of a queued job", state)
	}
	plugin := kubectlPlugin(t)
	out, err := plugin("list", "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rows struct{ Items []overview.Row }
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows.Items) != 1 {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}
	if out, err = plugin("explain", tj.Name, "-n", ns, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var ex explain.Explanation
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatalf("explain -o json: %v\n%s", err, out)
	}
	metric := scrapeOurMetrics(t, ns)[fmt.Sprintf(`trainjob_kueue_trainjobs{local_queue=%q,namespace=%q,state=%q}`, lq, ns, lifecycle.Queued)]
	if rows.Items[0].State != lifecycle.Queued || ex.State != lifecycle.Queued || metric != 1 {
		t.Errorf("queued: list says %q, explain %q, the metric %v jobs %s; want each %s", rows.Items[0].State, ex.State, metric, lifecycle.Queued, lifecycle.Queued)
	}

	// Held for its runtime, forced away while it queued.
	if err := fixtures.ForceDelete(ctx, k8s, rt); err != nil {
		t.Fatal(err)
	}
	setCPUQuota(t, ns, "8")
	eventually(t, 2*time.Minute, "told held for its runtime", func() error {
		return conditionSays(tj, metav1.ConditionFalse, string(lifecycle.WaitingForRuntime), "TrainingRuntime "+ns+"/torch")
	})

	// Admitted once the runtime is back: kubectl wait returns.
	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1), role))
	kubectlWait(t, tj, names.AdmittedCondition, 2*time.Minute)
	if err := conditionSays(tj, metav1.ConditionTrue, "Admitted", "ClusterQueue "+ns); err != nil {
		t.Fatal(err)
	}

	// Preempted by a job that needs the whole quota, then admitted again.
	eventually(t, 2*time.Minute, "running", func() error {
		if suspended(getJob(t, tj)) {
			return fmt.Errorf("suspended")
		}
		return nil
	})
	// Admitted, STATE is Trainer's word still (its Suspended=False, or
	// later ones), never our condition's type.
	if state := stateColumn(t, tj); strings.Contains(state, names.AdmittedCondition) {
		t.Errorf("kubectl get trainjob's STATE says %q of a running job", state)
	}
	urgent := fixtures.TrainJob(ns, "urgent", "urgent", lq)
	create(t, urgent)
	waitComplete(t, urgent, 3*time.Minute)
	waitComplete(t, tj, 4*time.Minute)

	reasons, trainers := seen()
	t.Logf("our condition said, in turn: %v", reasons)
	// The hold was seen above (it lasts until the runtime is back, a
	// moment a poll may miss); in turn, the watch sees the rest.
	wantInOrder := []string{"Queued", "Admitted", "", "Admitted"}
	i := 0
	for _, r := range reasons {
		if i < len(wantInOrder) && (r == wantInOrder[i] || wantInOrder[i] == "" && (r == string(lifecycle.Evicted) || r == string(lifecycle.Requeued))) {
			i++
		}
	}
	if i < len(wantInOrder) {
		t.Errorf("our condition said %v; want, in turn, %v (\"\": Evicted or Requeued)", reasons, wantInOrder)
	}
	if state := stateColumn(t, tj); state != trainer.TrainJobComplete {
		t.Errorf("kubectl get trainjob's STATE says %q of a finished job, want %s", state, trainer.TrainJobComplete)
	}
	final := getJob(t, tj)
	if !apimeta.IsStatusConditionTrue(final.Status.Conditions, trainer.TrainJobComplete) {
		t.Errorf("Trainer's Complete condition: %v", final.Status.Conditions)
	}
	for _, typ := range trainers {
		if apimeta.FindStatusCondition(final.Status.Conditions, typ) == nil {
			t.Errorf("Trainer's condition %s, seen while the job ran, is gone: %v", typ, final.Status.Conditions)
		}
	}
}

// conditionSays: tj's condition of ours has status and reason, and its
// message names want.
func conditionSays(tj *trainer.TrainJob, status metav1.ConditionStatus, reason, want string) error {
	got := &trainer.TrainJob{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
		return err
	}
	c := apimeta.FindStatusCondition(got.Status.Conditions, names.AdmittedCondition)
	if c == nil || c.Status != status || c.Reason != reason || !strings.Contains(c.Message, want) {
		return fmt.Errorf("condition %s: %+v; want %s, %s, naming %q", names.AdmittedCondition, c, status, reason, want)
	}
	return nil
}

// watchCondition polls tj until the test ends; seen returns the reasons
// our condition gave, each change once, and the types of Trainer's
// conditions seen. A condition of ours that goes missing once written is
// an error.
func watchCondition(t *testing.T, tj *trainer.TrainJob) (seen func() (reasons, trainers []string)) {
	t.Helper()
	var mu sync.Mutex
	var reasons, trainers []string
	var wrote bool
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			got := &trainer.TrainJob{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
				continue
			}
			mu.Lock()
			for _, c := range got.Status.Conditions {
				switch {
				case c.Type == names.AdmittedCondition:
					wrote = true
					if len(reasons) == 0 || reasons[len(reasons)-1] != c.Reason {
						reasons = append(reasons, c.Reason)
					}
				case !slices.Contains(trainers, c.Type):
					trainers = append(trainers, c.Type)
				}
			}
			if wrote && apimeta.FindStatusCondition(got.Status.Conditions, names.AdmittedCondition) == nil {
				reasons = append(reasons, "(gone)")
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return func() ([]string, []string) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reasons), slices.Clone(trainers)
	}
}

// kubectlWait runs kubectl wait --for=condition=typ on tj.
// kubectlGet is what kubectl get prints of tj, its header and row.
func kubectlGet(t *testing.T, tj *trainer.TrainJob) string {
	t.Helper()
	cluster, err := localcluster.Open(filepath.Dir(kubeconfigPath))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(cluster.Kubectl(), "get", "--kubeconfig", kubeconfigPath, "-n", tj.Namespace, "trainjob/"+tj.Name).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get trainjob: %v\n%s", err, out)
	}
	return string(out)
}

// stateColumn is the STATE column kubectl get prints of tj: Trainer's CRD
// prints the type of the last condition (every release we support).
func stateColumn(t *testing.T, tj *trainer.TrainJob) string {
	t.Helper()
	out := kubectlGet(t, tj)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get trainjob printed %q", out)
	}
	header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	i := slices.Index(header, "STATE")
	if i < 0 || i >= len(row) {
		t.Fatalf("kubectl get trainjob printed no STATE column: %q", out)
	}
	return row[i]
}

func kubectlWait(t *testing.T, tj *trainer.TrainJob, typ string, timeout time.Duration) {
	t.Helper()
	cluster, err := localcluster.Open(filepath.Dir(kubeconfigPath))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cluster.Kubectl(), "wait", "--kubeconfig", kubeconfigPath, "-n", tj.Namespace, "trainjob/"+tj.Name,
		"--for=condition="+typ, "--timeout="+timeout.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl wait --for=condition=%s: %v\n%s\nthe job's conditions: %+v", typ, err, out, getJob(t, tj).Status.Conditions)
	}
}
