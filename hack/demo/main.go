// Command demo is `make demo`: it brings up the local control plane, adds
// two pools of fake GPU nodes, flavors, two ClusterQueues in a cohort,
// runtimes and a dozen TrainJobs of mixed sizes and priorities, and shows
// them live — queued, admitted to a flavor, running, preempted, done — until
// all are done. The cluster stays up afterwards.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/overview"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

const ns = "demo"

func main() {
	name := flag.String("cluster", "local", "cluster name")
	timeout := flag.Duration("timeout", 15*time.Minute, "give up after this long")
	record := flag.String("record-metrics", "", "keep a scrape of the manager's metrics every 5s in this directory")
	trainerVersion := flag.String("trainer-version", "", "the cluster's Trainer release (the local cluster's default when empty)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *name, *trainerVersion, *timeout, *record); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, name, trainerVersion string, timeout time.Duration, record string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	// kubectl builds while the jobs run: on a cold machine the cluster is
	// up half a minute sooner.
	settings := localcluster.Settings{TrainerVersion: trainerVersion}
	if running, err := localcluster.Existing(root, name); err == nil {
		// A cluster of that name already up (make cluster-up, with its
		// own releases) runs the demo as it is, rather than refusing it
		// for other settings.
		settings = running.Settings()
	}
	c, err := localcluster.Up(ctx, localcluster.Options{Name: name, Root: root, Settings: settings, Progress: os.Stdout, KubectlLater: true})
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	k, err := client.New(cfg, client.Options{Scheme: fixtures.Scheme()})
	if err != nil {
		return err
	}
	ours, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	positions, err := explain.NewVisibilityPositions(cfg)
	if err != nil {
		return err
	}
	d := &demo{k: k, ours: ours, trainerVersion: c.Settings().TrainerVersion, positions: positions, explainer: &explain.Explainer{Client: ours, Positions: positions}}
	if err := d.reset(ctx); err != nil {
		return err
	}
	if err := d.setUp(ctx); err != nil {
		return err
	}
	if record != "" {
		r, err := newRecorder(ctx, c, record, 5*time.Second)
		if err != nil {
			return fmt.Errorf("recording metrics: %w", err)
		}
		rctx, stop := context.WithCancel(ctx)
		defer func() { stop(); _ = r.scrape() }()
		go r.run(rctx)
	}
	err = d.runJobs(ctx, timeout)
	// kubectl is there for whoever looks next, the demo done or not.
	if kerr := c.KubectlBuilt(); kerr != nil && err == nil {
		err = fmt.Errorf("building kubectl: %w", kerr)
	}
	if err != nil {
		return err
	}
	kubectl := c.Kubectl()
	// A log has it once already, from when the job was seen pending; a
	// terminal's screen was redrawn since.
	if d.explained != "" && isTTY() {
		fmt.Printf("\n%s", d.explained)
	}
	fmt.Printf("\nAll %d TrainJobs are done. The cluster is still up:\n\n", d.listed)
	fmt.Printf("  export KUBECONFIG=%s\n  %s get trainjobs,workloads.kueue.x-k8s.io -n %s\n  %s describe trainjob -n %s llm-1\n\n", c.Kubeconfig, kubectl, ns, kubectl, ns)
	fmt.Printf("Stop it with: make cluster-down CLUSTER=%s\n", name)
	return nil
}

type demo struct {
	k client.Client
	// ours reads with our TrainJob types; positions asks Kueue's
	// visibility API.
	ours      client.Reader
	positions *explain.VisibilityPositions
	// listed is how many TrainJobs the last table had.
	listed int

	// trainerVersion is the cluster's Trainer release: where a job's
	// own pod annotations go.
	trainerVersion string

	explainer *explain.Explainer
	// explained is `explain` of a job seen pending, shown under the table.
	explained string
}

// explainPending explains a job waiting for admission, as `kubectl
// trainjob-kueue explain` would: the first whose expected start is a time
// (what a newcomer should see), else the first.
func (d *demo) explainPending(ctx context.Context) error {
	var jobs trainer.TrainJobList
	if err := d.k.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		return err
	}
	sort.Slice(jobs.Items, func(i, j int) bool { return jobs.Items[i].Name < jobs.Items[j].Name })
	var first string
	for i := range jobs.Items {
		tj := &jobs.Items[i]
		if !ptr.Deref(tj.Spec.Suspend, false) || apimeta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobComplete) {
			continue
		}
		job, err := d.explainer.Get(ctx, tj.Namespace, tj.Name)
		if err != nil {
			return err
		}
		ex, err := d.explainer.Explain(ctx, job)
		if err != nil {
			return err
		}
		if ex.State != lifecycle.Queued {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Why is %s pending?  kubectl trainjob-kueue explain %s/%s\n\n", tj.Name, ns, tj.Name)
		if err := ex.WriteText(&b); err != nil {
			return err
		}
		if ex.ExpectedStart != nil && ex.ExpectedStart.At != nil {
			d.explained = b.String()
			return nil
		}
		if first == "" {
			first = b.String()
		}
	}
	d.explained = first
	return nil
}

// Pools of fake GPU nodes, tainted so only pods with the flavor's
// tolerations land there.
var (
	gpuTaint = corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	a100     = fixtures.Pool{Name: "a100", Labels: map[string]string{"demo.trainjob-kueue.dev/pool": "a100"}, Taints: []corev1.Toleration{gpuTaint}}
	h100     = fixtures.Pool{Name: "h100-spot", Labels: map[string]string{"demo.trainjob-kueue.dev/pool": "h100-spot"},
		Taints: []corev1.Toleration{gpuTaint, {Key: "spot", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}}
)

// reset removes what an earlier demo left, so the demo can run again.
func (d *demo) reset(ctx context.Context) error {
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := d.k.Delete(ctx, nsObj); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	for _, o := range []client.Object{
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "research"}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "production"}},
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: a100.Name}},
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: h100.Name}},
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "demo-low"}},
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "demo-high"}},
	} {
		if err := d.k.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	fmt.Println("waiting for an earlier demo's objects to go away")
	for {
		err := d.k.Get(ctx, client.ObjectKeyFromObject(nsObj), &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	return nil
}

func (d *demo) setUp(ctx context.Context) error {
	for i := range 2 {
		for _, n := range []*corev1.Node{fixtures.Node(fmt.Sprintf("a100-%d", i), a100, 8), fixtures.Node(fmt.Sprintf("h100-spot-%d", i), h100, 8)} {
			if err := localcluster.AddNode(ctx, d.k, n); err != nil {
				return err
			}
		}
	}
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}}
	a, h := a100, h100
	a.GPUs, h.GPUs = 8, 8
	flavors, research, lqResearch := fixtures.Queue(ns, "research", a, h)
	// Flavors are the pools themselves, shared by both queues.
	for i, f := range flavors {
		f.Name = []string{a.Name, h.Name}[i]
		research.Spec.ResourceGroups[0].Flavors[i].Name = kueue.ResourceFlavorReference(f.Name)
	}
	research.Spec.CohortName = "ml"
	research.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority, ReclaimWithinCohort: kueue.PreemptionPolicyAny}
	lqResearch.Name = "research"
	// production borrows the same flavors' quota through the cohort.
	production := research.DeepCopy()
	production.Name = "production"
	production.ResourceVersion = ""
	lqProduction := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "production"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "production"}}
	for _, f := range flavors {
		objs = append(objs, f)
	}
	objs = append(objs, research, production, lqResearch, lqProduction,
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "demo-low"}, Value: 10},
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "demo-high"}, Value: 1000})
	for _, rt := range []*trainer.TrainingRuntime{
		fixtures.TrainingRuntime(ns, "torch-with-init", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("2")},
			fixtures.Role{Name: "model-initializer", Ancestor: "model-initializer", Requests: fixtures.CPUs("2")},
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("4"), DependsOn: []string{"dataset-initializer", "model-initializer"}}),
		fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("4")}),
		fixtures.TrainingRuntime(ns, "mpi", fixtures.MPIPolicy(1, true),
			fixtures.Role{Name: "launcher", Ancestor: "trainer", Requests: fixtures.GPUs(4)},
			fixtures.Role{Name: "node", Requests: fixtures.GPUs(4)}),
	} {
		// kwok stops a deleted pod at a random moment of its grace period:
		// with the default 30 s a preempted job's pods held their nodes
		// for half a minute of a two-minute demo.
		for i := range rt.Spec.Template.Spec.ReplicatedJobs {
			rt.Spec.Template.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](3)
		}
		objs = append(objs, rt)
	}
	for _, o := range objs {
		if err := create(ctx, d.k, o); err != nil {
			return err
		}
	}
	jobs, err := d.jobs(false)
	if err != nil {
		return err
	}
	for _, tj := range jobs {
		if err := create(ctx, d.k, tj); err != nil {
			return err
		}
	}
	return nil
}

// jobs are the demo's TrainJobs: late ones are high priority and arrive
// when the cluster is full, preempting low-priority work.
func (d *demo) jobs(late bool) ([]client.Object, error) {
	type spec struct {
		name, runtime, queue, priority string
		nodes, gpus                    int32
		runFor                         time.Duration
		// bounded: the job carries Kueue's maximum execution time, so the
		// jobs waiting for its quota are told when they start; urgent-1
		// has none, and whoever waits for it is told that is unknown.
		bounded bool
	}
	specs := []spec{
		{"llm-1", "torch-with-init", "research", "demo-low", 2, 4, 10 * time.Second, true},
		{"llm-2", "torch-with-init", "research", "demo-low", 2, 4, 9 * time.Second, true},
		{"vision-1", "torch", "research", "demo-low", 1, 8, 9 * time.Second, true},
		{"vision-2", "torch", "production", "demo-low", 1, 4, 7 * time.Second, true},
		{"mpi-1", "mpi", "production", "demo-low", 2, 4, 7 * time.Second, true},
		{"sweep-1", "torch", "research", "demo-low", 1, 2, 6 * time.Second, true},
		{"sweep-2", "torch", "research", "demo-low", 1, 2, 6 * time.Second, true},
		{"sweep-3", "torch", "production", "demo-low", 1, 2, 6 * time.Second, true},
		{"sweep-4", "torch", "production", "demo-low", 1, 2, 6 * time.Second, true},
	}
	if late {
		// Each fits its ClusterQueue's own quota of a flavor (8 GPUs), so
		// it preempts lower-priority work at once: a job that has to
		// borrow cannot preempt for it (no borrowWithinCohort) and a
		// 16-GPU one waited for a whole flavor to drain, low-priority jobs
		// that fit passing it meanwhile — the demo's last minute.
		specs = []spec{
			{"urgent-1", "torch", "research", "demo-high", 2, 4, 7 * time.Second, false},
			{"urgent-2", "torch-with-init", "production", "demo-high", 2, 4, 7 * time.Second, true},
			{"urgent-3", "mpi", "production", "demo-high", 2, 4, 6 * time.Second, true},
		}
	}
	var out []client.Object
	for _, s := range specs {
		tj := fixtures.TrainJob(ns, s.name, s.runtime, s.queue)
		tj.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To(s.nodes)}
		if s.runtime != "mpi" {
			tj.Spec.Trainer.ResourcesPerNode = ptr.To(fixtures.WithLimits(corev1.ResourceList{
				fixtures.GPU: *resource.NewQuantity(int64(s.gpus), resource.DecimalSI), corev1.ResourceCPU: resource.MustParse("4"),
			}))
		}
		if s.priority != "" {
			tj.Labels["kueue.x-k8s.io/priority-class"] = s.priority
		}
		if s.bounded {
			// Generous: Kueue deactivates a job that runs past it (its
			// runs across preemptions added up).
			tj.Labels["kueue.x-k8s.io/max-exec-time-seconds"] = fmt.Sprint(int((s.runFor + maxExecMargin).Seconds()))
		}
		// Every role runs for runFor on kwok.
		byRole := map[string]map[string]string{}
		for _, role := range []string{"dataset-initializer", "model-initializer", "node", "launcher"} {
			if !hasRole(s.runtime, role) {
				continue
			}
			byRole[role] = map[string]string{
				// kwok picks a delay between the two. Its stages'
				// own are 1–5 s to create a pod and as long again to
				// make it ready: 6 s on average of each pod's life,
				// twice over for a job whose nodes wait for its
				// initializers.
				"pod-complete.stage.kwok.x-k8s.io/delay":        roleTime(role, s.runFor).String(),
				"pod-complete.stage.kwok.x-k8s.io/jitter-delay": (roleTime(role, s.runFor) + 2*time.Second).String(),
				"pod-create.stage.kwok.x-k8s.io/delay":          "200ms",
				"pod-create.stage.kwok.x-k8s.io/jitter-delay":   "1s",
				"pod-ready.stage.kwok.x-k8s.io/delay":           "200ms",
				"pod-ready.stage.kwok.x-k8s.io/jitter-delay":    "1s",
			}
		}
		u, err := fixtures.WithPodAnnotations(tj, d.trainerVersion, byRole)
		if err != nil {
			return nil, fmt.Errorf("the demo's job %s: %w", s.name, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// maxExecMargin is what a bounded job's maximum execution time allows
// beyond its run: kwok's delays, its initializers, a preemption's rerun.
const maxExecMargin = 40 * time.Second

func hasRole(runtime, role string) bool {
	switch runtime {
	case "torch-with-init":
		return role != "launcher"
	case "mpi":
		return role == "node" || role == "launcher"
	default:
		return role == "node"
	}
}

func roleTime(role string, runFor time.Duration) time.Duration {
	if strings.HasSuffix(role, "-initializer") {
		return 3 * time.Second
	}
	return runFor
}

func create(ctx context.Context, k client.Client, o client.Object) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := k.Create(ctx, o)
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		// Webhooks answer from informer caches that may lag a moment.
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "must be created before") {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// show prints the live table — `kubectl trainjob-kueue list`'s, from the
// same code — and reports whether every job is done.
func (d *demo) show(ctx context.Context, start time.Time) (bool, error) {
	in, _, err := overview.Fetch(ctx, d.ours, d.positions, overview.Options{Namespace: ns}, time.Now())
	if err != nil {
		return false, err
	}
	rows := overview.Rows(in)
	d.listed = len(rows)
	d.expect(ctx, rows)
	var b strings.Builder
	if isTTY() {
		b.WriteString("\033[H\033[2J")
	}
	fmt.Fprintf(&b, "trainjob-kueue demo — %s   (kubectl trainjob-kueue list -n %s -o wide)\n\n", time.Since(start).Round(time.Second), ns)
	if err := overview.Write(&b, rows, "wide", false); err != nil {
		return false, err
	}
	allDone := len(rows) > 0
	for _, r := range rows {
		if r.State != lifecycle.Finished {
			allDone = false
		}
	}
	if d.explained != "" && isTTY() {
		// A refreshing screen keeps it under the table; a log has it once.
		b.WriteString("\n" + d.explained)
	}
	fmt.Print(b.String())
	if !isTTY() {
		fmt.Println()
	}
	return allDone, nil
}

// expect fills the expected start of each waiting row, as list -o wide
// does: the ClusterQueues played forward.
func (d *demo) expect(ctx context.Context, rows []overview.Row) {
	var queues []string
	for _, r := range rows {
		if r.State.Waiting() && r.ClusterQueue != "" && !slices.Contains(queues, r.ClusterQueue) {
			queues = append(queues, r.ClusterQueue)
		}
	}
	if len(queues) == 0 {
		return
	}
	starts, err := d.explainer.Forecasts(ctx, queues)
	if err != nil {
		return // the column then says "-": the demo goes on
	}
	now := time.Now()
	for i := range rows {
		if s, ok := starts[rows[i].Namespace+"/"+rows[i].Name]; ok && rows[i].State.Waiting() {
			rows[i].ExpectedStart = forecast.Expected(s, now)
		}
	}
}

// runJobs lets the demo's jobs run until every one is done, showing them
// each second: the high-priority jobs arrive once the cluster is full,
// and a pending job is explained once.
func (d *demo) runJobs(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	start := time.Now()
	late, err := d.jobs(true)
	if err != nil {
		return err
	}
	for {
		if len(late) > 0 && time.Since(start) > 6*time.Second {
			// High-priority jobs arrive once the cluster is full.
			for _, tj := range late {
				if err := create(ctx, d.k, tj); err != nil {
					return err
				}
			}
			late = nil
		}
		if d.explained == "" && late == nil && time.Since(start) > 10*time.Second {
			if err := d.explainPending(ctx); err != nil {
				return err
			}
			if d.explained != "" && !isTTY() {
				fmt.Println(d.explained)
			}
		}
		done, err := d.show(ctx, start)
		if err != nil {
			return err
		}
		if done && late == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not all TrainJobs finished within %s; see kubectl get trainjobs -n %s", timeout, ns)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func isTTY() bool {
	fi, err := os.Stdout.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
