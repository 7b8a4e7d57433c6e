package e2e_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
)

// kubectlPlugin builds trainjob-kueue as the kubectl plugin
// kubectl-trainjob_kueue into a directory of its own and returns a command
// running `kubectl trainjob-kueue args...` with that directory on PATH.
func kubectlPlugin(t *testing.T) func(args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-trainjob_kueue"), "./cmd/kubectl-trainjob_kueue")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	cluster, err := localcluster.Open(filepath.Dir(kubeconfigPath))
	if err != nil {
		t.Fatal(err)
	}
	return func(args ...string) (string, error) {
		cmd := exec.Command(cluster.Kubectl(), append([]string{"trainjob-kueue"}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfigPath)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			return out.String(), fmt.Errorf("%v: %s", err, stderr.String())
		}
		return out.String(), nil
	}
}

// runningAndPending fills a queue of one 8-GPU node with a long 8-GPU job
// "running" and queues a second one, "pending", behind it.
func runningAndPending(t *testing.T) (ns, lq string, running, pending *trainer.TrainJob) {
	t.Helper()
	ns = namespace(t)
	pool := gpuPool(ns, "gpu", 8)
	nodesOf(t, ns, pool, 1, 8)
	lq = queue(t, ns, ns, pool)
	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(10 * time.Minute)}))
	running = fixtures.TrainJob(ns, "running", "torch", lq)
	create(t, running)
	eventually(t, 2*time.Minute, "running started", func() error {
		if suspended(getJob(t, running)) {
			return fmt.Errorf("still suspended")
		}
		return nil
	})
	pending = fixtures.TrainJob(ns, "pending", "torch", lq)
	create(t, pending)
	fixtures.WaitWorkload(t, ctx, k8s, pending)
	return ns, lq, running, pending
}

func TestExplainPendingRunningAndNotYetCreatedJobsAsAKubectlPlugin(t *testing.T) {
	ns, lq, _, _ := runningAndPending(t)

	kubectl := kubectlPlugin(t)
	flavor := ns + "-gpu"
	out, err := kubectl("explain", ns+"/pending")
	if err != nil {
		t.Fatal(err)
	}
	// Columns are aligned with spaces: compare words.
	words := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"State: Queued",
		"node 1 cpu=1 nvidia.com/gpu=8 cpu=1 nvidia.com/gpu=8 " + flavor + " (short 8 nvidia.com/gpu)",
		"Verdict: pending: short of 8 nvidia.com/gpu in flavor " + flavor,
		"ClusterQueue " + ns + " has 0 free of 8 nominal",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("explain of the pending job lacks %q:\n%s", want, out)
		}
	}

	// Kueue's visibility API (served on the local cluster as on a real
	// one, behind kube-apiserver's aggregation layer) gives the positions.
	second := fixtures.TrainJob(ns, "pending-2", "torch", lq)
	create(t, second)
	fixtures.WaitWorkload(t, ctx, k8s, second)
	for job, want := range map[string]string{
		"pending":   "Position: 0 in LocalQueue, 0 in ClusterQueue",
		"pending-2": "Position: 1 in LocalQueue, 1 in ClusterQueue",
	} {
		eventually(t, 30*time.Second, job+"'s position", func() error {
			out, err := kubectl("explain", job, "-n", ns)
			if err != nil {
				return err
			}
			if words := strings.Join(strings.Fields(out), " "); !strings.Contains(words, want) {
				return fmt.Errorf("explain of %s lacks %q:\n%s", job, want, out)
			}
			return nil
		})
	}

	out, err = kubectl("explain", "running", "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var ex explain.Explanation
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if ex.State != lifecycle.Running || !strings.Contains(ex.Verdict, "admitted by ClusterQueue "+ns+": node→"+flavor) {
		t.Errorf("running job: state %s, verdict %q", ex.State, ex.Verdict)
	}

	// What if a bigger job were submitted? Not created, explained.
	big := fixtures.TrainJob(ns, "big", "torch", lq)
	big.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
	big.APIVersion, big.Kind = trainer.GroupVersion.String(), "TrainJob"
	manifest, err := yaml.Marshal(big)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = kubectl("explain", "-f", file, "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	var whatIf explain.Explanation
	if err := yaml.Unmarshal([]byte(out), &whatIf); err != nil {
		t.Fatalf("-o yaml: %v\n%s", err, out)
	}
	if !strings.Contains(whatIf.Verdict, "does not fit even when the queue and its cohort are idle") || whatIf.Roles[0].Count != 2 {
		t.Errorf("what-if of a 16-GPU job on 8 GPUs of quota:\n%s", out)
	}
}

// scrapeOurMetrics reads trainjob-kueue's secure metrics endpoint as a
// service account bound to the shipped metrics-reader role.
func scrapeOurMetrics(t *testing.T, ns string) map[string]float64 {
	t.Helper()
	cluster, err := localcluster.Open(filepath.Dir(kubeconfigPath))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "metrics_reader_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(data, role); err != nil {
		t.Fatal(err)
	}
	role.Name = ns + "-metrics-reader"
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prometheus"}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: sa.Name}},
	}
	create(t, role, sa, binding)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// controller-runtime serves metrics with a self-signed certificate.
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback, self-signed
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", cluster.Port("ours-metrics")), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.Status.Token)
	var samples map[string]float64
	eventually(t, 30*time.Second, "scrape trainjob-kueue's metrics", func() error {
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /metrics: %s", resp.Status)
		}
		samples = map[string]float64{}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "#") {
				continue
			}
			i := strings.LastIndexByte(line, ' ')
			if i < 0 {
				continue
			}
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				samples[line[:i]] = v
			}
		}
		return sc.Err()
	})
	return samples
}

// Counters are cumulative over the cluster's life: other tests add to them.
func TestMetricsCountWhatHappened(t *testing.T) {
	ns, lq, _, _ := runningAndPending(t)

	// `kubectl describe` tells the story with our events.
	cluster, err := localcluster.Open(filepath.Dir(kubeconfigPath))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "describe shows the admission", func() error {
		cmd := exec.Command(cluster.Kubectl(), "describe", "trainjob", "-n", ns, "running")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigPath)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		for _, want := range []string{"CreatedWorkload", "Started", "Injected", "Admitted to flavors node→" + ns + "-gpu"} {
			if !strings.Contains(string(out), want) {
				return fmt.Errorf("no %q in:\n%s", want, out)
			}
		}
		return nil
	})

	m := scrapeOurMetrics(t, ns)
	for name, min := range map[string]float64{
		`trainjob_kueue_injections_total{reason="",result="done"}`:                                   1,
		`controller_runtime_reconcile_total{controller="trainjob",result="success"}`:                 1,
		`trainjob_kueue_admission_to_start_seconds_count`:                                            1,
		fmt.Sprintf(`trainjob_kueue_trainjobs{local_queue=%q,namespace=%q,state="Running"}`, lq, ns): 1,
		fmt.Sprintf(`trainjob_kueue_trainjobs{local_queue=%q,namespace=%q,state="Queued"}`, lq, ns):  1,
	} {
		if m[name] < min {
			t.Errorf("%s = %v, want ≥ %v", name, m[name], min)
		}
	}
	// Every request's wait on the client-side rate limiter is reported
	// (client-go's hook, set by the manager's main), whatever its budget.
	var throttled float64
	for name, v := range m {
		if strings.HasPrefix(name, "rest_client_rate_limiter_duration_seconds_count{") {
			throttled += v
		}
	}
	if throttled < 1 {
		t.Errorf("rest_client_rate_limiter_duration_seconds_count: %v requests, want every request's wait reported", throttled)
	}
}

// `kubectl apply -k config/default` is accepted by a real API server with
// Kueue's, Trainer's and JobSet's CRDs and webhooks: a server-side dry run,
// so the cluster under test is not changed.
func TestConfigDefaultAppliesServerSide(t *testing.T) {
	cluster, err := localcluster.Open(filepath.Dir(kubeconfigPath))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cluster.Kubectl(), "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-k", filepath.Join("..", "..", "config", "default"))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply -k config/default --dry-run=server: %v\n%s", err, out)
	}
	for _, want := range []string{
		"deployment.apps/trainjob-kueue-controller-manager serverside-applied (server dry run)",
		"mutatingwebhookconfiguration.admissionregistration.k8s.io/trainjob-kueue-mutating-webhook-configuration serverside-applied (server dry run)",
		"clusterrole.rbac.authorization.k8s.io/trainjob-kueue-trainjob-viewer serverside-applied (server dry run)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("kubectl output lacks %q:\n%s", want, out)
		}
	}
}
