package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

// kubectl trainjob-kueue plan -f of a job not submitted, as a user runs
// it: fits now on an idle queue; behind a running job with Kueue's
// maximum execution time, starts at that job's end; with --set
// trainer.numNodes=2, never fits, the quota named; and nothing is created.
func TestPlanSaysWhenAJobWouldStartAsAKubectlPlugin(t *testing.T) {
	ns := namespace(t)
	pool := gpuPool(ns, "gpu", 8)
	nodesOf(t, ns, pool, 1, 8)
	lq := queue(t, ns, ns, pool)
	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(10 * time.Minute)}))
	manifest := filepath.Join(t.TempDir(), "job.yaml")
	job := fixtures.TrainJob(ns, "planned", "torch", lq)
	job.APIVersion, job.Kind = trainer.GroupVersion.String(), "TrainJob"
	data, err := yaml.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, data, 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl := kubectlPlugin(t)
	plan := func(args ...string) string {
		t.Helper()
		out, err := kubectl(append([]string{"plan", "-f", manifest}, args...)...)
		if err != nil {
			t.Fatalf("plan %v: %v\n%s", args, err, out)
		}
		return strings.Join(strings.Fields(out), " ")
	}

	for _, want := range []string{"Dry run: accepted by the API server's admission; not created", "Verdict: fits now", "Expected: now, once Kueue admits it"} {
		if out := plan(); !strings.Contains(out, want) {
			t.Errorf("plan on an idle queue lacks %q:\n%s", want, out)
		}
	}

	running := fixtures.TrainJob(ns, "running", "torch", lq)
	running.Labels["kueue.x-k8s.io/max-exec-time-seconds"] = "3600"
	create(t, running)
	eventually(t, 2*time.Minute, "running started", func() error {
		if suspended(getJob(t, running)) {
			return fmt.Errorf("still suspended")
		}
		return nil
	})
	want := "in about 1h, once " + ns + "/running (1h left, its maximum execution time) finishes"
	if out := plan(); !strings.Contains(out, want) {
		t.Errorf("plan behind the running job lacks %q:\n%s", want, out)
	}
	out := plan("--set", "trainer.numNodes=2")
	for _, want := range []string{"role node needs 16", "it does not fit even when the queue and its cohort are idle", "Expected: unknown: it does not fit even once every running job has ended"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan --set trainer.numNodes=2 lacks %q:\n%s", want, out)
		}
	}

	var jobs trainer.TrainJobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Errorf("%d TrainJobs in %s after the plans, want the running one alone", len(jobs.Items), ns)
	}
}
