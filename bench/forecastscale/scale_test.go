// Package forecastscale measures what `kubectl trainjob-kueue list -A -o
// wide` and `explain` cost over a queue of thousands of TrainJobs: the
// plugin binary run against a real kube-apiserver and etcd holding the
// real Kueue and Trainer CRDs, filled with TrainJobs and their Workloads
// as Kueue leaves them (one running job, the rest pending behind it, a
// runtime with a history). No controller runs: the reads and the forecast
// are what is measured. A benchmark (make bench-forecast-scale), never a
// timed test.
package forecastscale_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/paging"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

const (
	namespace = "team"
	gpu       = corev1.ResourceName("nvidia.com/gpu")
	// runs is how many times each figure is measured; the median is said.
	runs = 3
)

// BenchmarkListAtScale: the sweep, one ClusterQueue with room for one
// 8-GPU job (queue=1) and the same jobs spread over a cohort of ten
// (queue=10), each size filled on top of the last.
func BenchmarkListAtScale(b *testing.B) {
	for _, queues := range []int{1, 10} {
		b.Run(fmt.Sprintf("queues=%d", queues), func(b *testing.B) {
			c := start(b, queues)
			for _, n := range []int{1000, 3000, 10000} {
				b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
					c.fill(b, n)
					for b.Loop() {
						list, known := c.medianList(b)
						b.ReportMetric(list.Seconds(), "s/list")
						b.ReportMetric(float64(known), "expected-starts")
						b.ReportMetric(c.medianExplain(b, fmt.Sprintf("job-%05d", n-1)).Seconds(), "s/explain")
						b.ReportMetric(c.medianRead(b).Seconds(), "s/read-workloads")
					}
				})
			}
		})
	}
}

type cluster struct {
	env        *envtest.Environment
	k8s        client.Client
	kubeconfig string
	plugin     string
	queues     int
	filled     int
	now        time.Time
}

func start(b *testing.B, queues int) *cluster {
	b.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Fatal("KUBEBUILDER_ASSETS is not set: run make bench-forecast-scale, which builds etcd and kube-apiserver")
	}
	crds, err := crdsOf()
	if err != nil {
		b.Fatal(err)
	}
	c := &cluster{env: &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{CRDs: crds}}, queues: queues, now: time.Now()}
	cfg, err := c.env.Start()
	if err != nil {
		b.Fatalf("starting kube-apiserver and etcd: %v", err)
	}
	b.Cleanup(c.stop)
	cfg.QPS, cfg.Burst = 500, 1000
	log.SetLogger(logr.Discard())
	if c.k8s, err = client.New(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		b.Fatal(err)
	}
	user, err := c.env.AddUser(envtest.User{Name: "bench", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	c.kubeconfig, c.plugin = filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "kubectl-trainjob_kueue")
	if err := os.WriteFile(c.kubeconfig, kc, 0o600); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", c.plugin, "../../cmd/kubectl-trainjob_kueue").CombinedOutput(); err != nil {
		b.Fatalf("building the plugin: %v\n%s", err, out)
	}
	c.queuesUp(b)
	return c
}

func (c *cluster) stop() {
	if c.env != nil {
		_ = c.env.Stop()
		c.env = nil
	}
}

// crdsOf are the real Kueue and Trainer CRDs of the module's releases.
func crdsOf() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	kueueDir, err := localcluster.ModuleDir("", "sigs.k8s.io/kueue")
	if err != nil {
		return nil, err
	}
	trainerDir, err := localcluster.ModuleDir("", "github.com/kubeflow/trainer/v2")
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(kueueDir, "config/components/crd/bases/*.yaml"))
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"trainjobs", "trainingruntimes", "clustertrainingruntimes"} {
		files = append(files, filepath.Join(trainerDir, "manifests/base/crds/trainer.kubeflow.org_"+f+".yaml"))
	}
	return localcluster.ReadCRDs(files...)
}

// queuesUp makes the namespace, the runtime (its nine finished runs are
// its history), the flavor, and c.queues ClusterQueues of 8 GPUs each in
// one cohort, each full with one running job, and a LocalQueue for each.
func (c *cluster) queuesUp(b *testing.B) {
	ctx := context.Background()
	rt := fixtures.TrainingRuntime(namespace, "torch", fixtures.TorchPolicy(1), fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8)})
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, rt,
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "a100"}}}
	for _, o := range objs {
		if err := c.k8s.Create(ctx, o); err != nil {
			b.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	for q := range c.queues {
		cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cqName(q)}, Spec: kueue.ClusterQueueSpec{
			CohortName: "pool", QueueingStrategy: kueue.BestEffortFIFO,
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, gpu}, Flavors: []kueue.FlavorQuotas{{
				Name: "a100", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("1000")}, {Name: gpu, NominalQuota: resource.MustParse("8")}}}}}}}}
		if err := c.k8s.Create(ctx, cq); err != nil {
			b.Fatal(err)
		}
		cq.Status.FlavorsReservation = []kueue.FlavorUsage{{Name: "a100", Resources: []kueue.ResourceUsage{{Name: gpu, Total: resource.MustParse("8")}}}}
		cq.Status.Conditions = []metav1.Condition{{Type: kueue.ClusterQueueActive, Status: metav1.ConditionTrue, Reason: "Ready", Message: "Can admit new workloads", LastTransitionTime: metav1.Now()}}
		if err := c.k8s.Status().Update(ctx, cq); err != nil {
			b.Fatal(err)
		}
		lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: lqName(q)}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cqName(q))}}
		if err := c.k8s.Create(ctx, lq); err != nil {
			b.Fatal(err)
		}
		c.job(b, fmt.Sprintf("running-%d", q), q, c.now.Add(-time.Minute), running)
	}
	for i := range 9 {
		c.job(b, fmt.Sprintf("finished-%d", i), 0, c.now.Add(-time.Duration(i+2)*time.Hour), finished)
	}
}

func cqName(q int) string { return fmt.Sprintf("cq-%d", q) }
func lqName(q int) string { return fmt.Sprintf("lq-%d", q) }

type phase int

const (
	pending phase = iota
	running
	finished
)

// fill creates jobs until n are queued, eight at a time, round robin over
// the LocalQueues, each a minute after the last.
func (c *cluster) fill(b *testing.B, n int) {
	b.Helper()
	from := c.filled
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := from + w; i < n; i += 8 {
				c.job(b, fmt.Sprintf("job-%05d", i), i%c.queues, c.now.Add(time.Duration(i-n)*time.Second), pending)
			}
		}()
	}
	wg.Wait()
	c.filled = n
}

// job makes a TrainJob and its Workload, as Kueue's job framework names
// and owns it, in the phase asked.
func (c *cluster) job(b testing.TB, name string, q int, at time.Time, p phase) {
	ctx := context.Background()
	tj := fixtures.TrainJob(namespace, name, "torch", lqName(q))
	tj.Spec.Suspend = ptr.To(p == pending)
	if err := c.k8s.Create(ctx, fixtures.Ours(tj)); err != nil {
		b.Errorf("creating TrainJob %s: %v", name, err)
		return
	}
	created := fixtures.Ours(tj)
	if err := c.k8s.Get(ctx, client.ObjectKeyFromObject(created), created); err != nil {
		b.Errorf("reading TrainJob %s: %v", name, err)
		return
	}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: jobframework.GetWorkloadNameForOwnerWithGVK(name, created.UID, trainjob.GVK),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: trainjob.GVK.GroupVersion().String(), Kind: trainjob.GVK.Kind, Name: name, UID: created.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(lqName(q)), MaximumExecutionTimeSeconds: ptr.To[int32](3600),
			PodSets: []kueue.PodSet{{Name: "node", Count: 1, Template: podTemplate()}}}}
	if err := c.k8s.Create(ctx, wl); err != nil {
		b.Errorf("creating Workload of %s: %v", name, err)
		return
	}
	wl.Status = statusOf(p, q, at)
	if err := c.k8s.Status().Update(ctx, wl); err != nil {
		b.Errorf("writing the status of Workload of %s: %v", name, err)
	}
}

// podTemplate is a trainer pod as Trainer renders it: the size that makes
// Workloads the heaviest kind listed.
func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"trainer.kubeflow.org/trainjob-ancestor-step": "trainer", "jobset.sigs.k8s.io/replicatedjob-name": "node"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure, Containers: []corev1.Container{{
			Name: "node", Image: "registry.example/torch:v1",
			Command: []string{"torchrun", "--nproc-per-node=8", "--nnodes=1", "train.py", "--epochs=3"},
			Env: []corev1.EnvVar{{Name: "PET_NNODES", Value: "1"}, {Name: "PET_NPROC_PER_NODE", Value: "8"}, {Name: "PET_NODE_RANK", Value: "0"},
				{Name: "PET_MASTER_ADDR", Value: "job-node-0-0.job"}, {Name: "PET_MASTER_PORT", Value: "29400"}},
			Ports:     []corev1.ContainerPort{{ContainerPort: 29400}},
			Resources: fixtures.WithLimits(fixtures.GPUs(8)),
		}}},
	}
}

func statusOf(p phase, q int, at time.Time) kueue.WorkloadStatus {
	t := metav1.NewTime(at)
	switch p {
	case running, finished:
		st := kueue.WorkloadStatus{Admission: &kueue.Admission{ClusterQueue: kueue.ClusterQueueReference(cqName(q)), PodSetAssignments: []kueue.PodSetAssignment{{
			Name: "node", Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{gpu: "a100"}, ResourceUsage: fixtures.GPUs(8), Count: ptr.To[int32](1)}}},
			Conditions: []metav1.Condition{
				{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", Message: "Quota reserved in ClusterQueue " + cqName(q), LastTransitionTime: t},
				{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", Message: "The workload is admitted", LastTransitionTime: t}}}
		if p == finished {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
				Reason: kueue.WorkloadFinishedReasonSucceeded, Message: "Job finished successfully", LastTransitionTime: metav1.NewTime(at.Add(50 * time.Minute))})
		}
		return st
	}
	return kueue.WorkloadStatus{Conditions: []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending",
		Message: "couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor a100, 8 more needed", LastTransitionTime: t}}}
}

// medianList runs list -A -o wide runs times: its median time; and how
// many rows of list -A -o json say an expected start as a time.
func (c *cluster) medianList(b *testing.B) (time.Duration, int) {
	var took []time.Duration
	for range runs {
		_, d := c.run(b, "list", "-A", "-o", "wide")
		took = append(took, d)
	}
	out, _ := c.run(b, "list", "-A", "-o", "json")
	var rows struct {
		Items []struct {
			ExpectedStart *struct {
				At *time.Time `json:"at"`
			} `json:"expectedStart"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		b.Fatalf("list -o json: %v\n%.500s", err, out)
	}
	known := 0
	for _, r := range rows.Items {
		if r.ExpectedStart != nil && r.ExpectedStart.At != nil {
			known++
		}
	}
	slices.Sort(took)
	return took[len(took)/2], known
}

// medianRead is the floor under both: one paged list of every Workload,
// in this process, with nothing done with them.
func (c *cluster) medianRead(b *testing.B) time.Duration {
	var took []time.Duration
	for range runs {
		began := time.Now()
		if err := paging.List(context.Background(), c.k8s, func() *kueue.WorkloadList { return &kueue.WorkloadList{} }, func(*kueue.WorkloadList) {}); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(began))
	}
	slices.Sort(took)
	return took[len(took)/2]
}

// medianExplain runs explain of job runs times: its median time.
func (c *cluster) medianExplain(b *testing.B, job string) time.Duration {
	var took []time.Duration
	for range runs {
		out, d := c.run(b, "explain", "-n", namespace, job)
		if !bytes.Contains(out, []byte("Expected")) {
			b.Fatalf("explain %s says no expected start:\n%s", job, out)
		}
		took = append(took, d)
	}
	slices.Sort(took)
	return took[len(took)/2]
}

// plugin_ runs the plugin binary: its output and how long it took.
func (c *cluster) run(b *testing.B, args ...string) ([]byte, time.Duration) {
	b.Helper()
	cmd := exec.Command(c.plugin, append(args, "--kubeconfig", c.kubeconfig)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	began := time.Now()
	out, err := cmd.Output()
	took := time.Since(began)
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", c.plugin, args, err, stderr.String())
	}
	return out, took
}
