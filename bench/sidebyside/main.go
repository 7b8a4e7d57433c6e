// Command bench measures trainjob-kueue side by side with Kueue's in-tree
// TrainJob integration and with Kueue's bare queueing path, on the local
// control plane: `make bench` (N=2000), `make bench-smoke` (a small run).
//
// Each round runs the same load against three set-ups, each on a fresh
// local cluster with the same components (order rotates between rounds):
//
//	floor   Kueue alone admitting bare Workloads of the TrainJobs' shape
//	intree  Kueue v0.16.2's built-in TrainJob integration
//	ours    Kueue with that integration off, plus trainjob-kueue
//
// Everything is measured from outside the integration: API requests from
// the API server's audit log, CPU and memory from /proc, latencies from
// watch events. Results: a markdown table on stdout, .bench/summary.json
// and .bench/latency.png.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

const (
	setupFloor  = "floor"
	setupInTree = "intree"
	setupOurs   = "ours"

	kueueUser = "system:serviceaccount:kueue-system:kueue-controller-manager"
)

type options struct {
	loadharness.Flags
	rounds  int
	rate    float64
	runFor  time.Duration
	timeout time.Duration
	stall   time.Duration
	check   bool
	setups  string
	profile time.Duration
	trace   time.Duration
	sweep   string
	// plotSweep: directories of earlier runs to plot as a sweep.
	plotSweep string
	// baseline: the committed baseline a run is checked against (or
	// written to, from makeBaseline's directories).
	baseline     string
	makeBaseline string
	// hold: Kueue's harness scale (docs/scale.md): every Workload held
	// after its quota reservation by an admission check that never turns
	// Ready; a job is done once its Workload reserved quota.
	hold bool
	// noCondition: trainjob-kueue runs without its queue condition.
	noCondition bool
}

func main() {
	var o options
	o.register(flag.CommandLine)
	flag.Parse()
	loadharness.Main("bench", func(ctx context.Context) error { return run(ctx, o) })
}

// register the flags on fs.
func (o *options) register(fs *flag.FlagSet) {
	o.Register(fs, 2000, "TrainJobs per set-up and round (half in a burst, half as a stream)", "leave each set-up's cluster up afterwards (.cluster/bench-<set-up>: audit log, logs), to look at; make cluster-down CLUSTER=bench-<set-up> removes it")
	fs.IntVar(&o.rounds, "rounds", 1, "rounds; each runs every set-up once, in rotating order")
	fs.Float64Var(&o.rate, "rate", 20, "jobs per second of the steady stream")
	fs.DurationVar(&o.runFor, "run-for", 2*time.Second, "how long each pod runs")
	fs.DurationVar(&o.timeout, "timeout", 90*time.Minute, "per set-up and round")
	fs.DurationVar(&o.stall, "stall", 10*time.Minute, "stop waiting for a set-up once no job finished for this long, and report where its unfinished jobs are (0: wait until -timeout)")
	fs.StringVar(&o.setups, "setups", "floor,intree,ours", "set-ups to run (all three for the ratios)")
	fs.DurationVar(&o.profile, "profile", 0, "take a CPU profile of trainjob-kueue for this long once the load starts (.bench/ours-cpu.pprof)")
	fs.DurationVar(&o.trace, "trace", 0, "take an execution trace of trainjob-kueue for this long once the load starts (.bench/ours-trace.out; go tool trace, or its -pprof=sched|net|sync|syscall)")
	fs.StringVar(&o.sweep, "sweep", "", "job counts to run the whole side by side at, one after another, e.g. 500,1000,2000 (.bench/sweep.json, .bench/sweep.png); -n is then ignored")
	fs.StringVar(&o.plotSweep, "plot-sweep", "", "output directories of earlier runs (comma-separated): write their sweep.json and sweep.png into -out, running nothing; runs of one N merge, a later directory's set-ups replacing an earlier's")
	fs.StringVar(&o.baseline, "baseline", "", "compare trainjob-kueue's figures with this committed baseline (make bench-check) and fail on a regression beyond each figure's bound")
	fs.StringVar(&o.makeBaseline, "make-baseline", "", "output directories of at least 5 earlier runs of one N (comma-separated): write the baseline of their figures to -baseline, running nothing")
	fs.BoolVar(&o.hold, "hold", false, "Kueue's harness scale: every ClusterQueue holds each Workload after its quota reservation (an admission check that never turns Ready, quota for any N), so no pod runs; every job is streamed at -rate, none in a burst; a job is done once its Workload reserved quota, and the figure is created → QuotaReserved (docs/scale.md)")
	fs.BoolVar(&o.noCondition, "no-queue-condition", false, "run trainjob-kueue with --queue-condition=false, to measure what its condition on TrainJobs costs (docs/benchmark.md)")
	fs.BoolVar(&o.check, "check", false, "fail unless every measurement is present and trainjob-kueue made no dry run (the smoke run)")
}

// result of one set-up in one round.
type result struct {
	setup     string
	jobs      map[string]*times
	start     time.Time
	end       time.Time
	kueue     usage // Kueue's process over the load
	ours      usage // trainjob-kueue's
	kueueDry  int
	ourDry    int
	ourVerbs  map[string]int
	kueueVerb map[string]int
	// ourStatus, kueueStatus: their writes of Workload status by field
	// manager.
	ourStatus   map[string]int
	kueueStatus map[string]int
	// unfinished: where the jobs stood when the set-up stalled; nil when
	// every job finished.
	unfinished map[string]int
	// hold: a harness-scale run, its jobs done at their quota reservation.
	hold bool
	// starts: each job's admitted → unsuspended, cut at the API server.
	starts startSplit
}

func run(ctx context.Context, o options) error {
	if o.plotSweep != "" {
		return replotSweep(o.Out, strings.Split(o.plotSweep, ","))
	}
	if o.makeBaseline != "" {
		if o.baseline == "" {
			return fmt.Errorf("-make-baseline writes to -baseline: give its path")
		}
		return writeBaselineFrom(o.baseline, o.rate, strings.Split(o.makeBaseline, ","))
	}
	if o.sweep != "" {
		ns, err := parseSweep(o.sweep)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return err
		}
		return sweep(ctx, o, ns)
	}
	s, err := runAll(ctx, o)
	if err != nil {
		return err
	}
	if o.check {
		return check(s)
	}
	if o.baseline != "" {
		return checkBaseline(o.baseline, s, os.Stdout)
	}
	return nil
}

// runAll runs every set-up for every round at o.N jobs and reports it in
// o.Out.
func runAll(ctx context.Context, o options) (*Summary, error) {
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	order := strings.Split(o.setups, ",")
	var results []*result
	for round := range o.rounds {
		for k := range order {
			setup := order[(k+round)%len(order)]
			fmt.Fprintf(os.Stderr, ">> round %d: %s, %d jobs\n", round+1, setup, o.N)
			r, err := runSetup(ctx, root, setup, o)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", setup, err)
			}
			results = append(results, r)
		}
	}
	s := summarize(o.N, results)
	if err := writeSummary(filepath.Join(o.Out, "summary.json"), s); err != nil {
		return nil, err
	}
	if err := plotCDFs(filepath.Join(o.Out, "latency.png"), results); err != nil {
		return nil, err
	}
	printTable(os.Stdout, s)
	fmt.Printf("\n%s/summary.json, %s/latency.png\n", o.Out, o.Out)
	return s, nil
}

func runSetup(ctx context.Context, root, setup string, o options) (*result, error) {
	c, down, err := clusterFor(ctx, root, setup, o)
	if err != nil {
		return nil, err
	}
	defer down()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	// The load generator is not what is measured: let it go fast.
	cfg.QPS, cfg.Burst = 500, 1000
	k, err := client.New(cfg, client.Options{Scheme: fixtures.Scheme()})
	if err != nil {
		return nil, err
	}
	if err := setUp(ctx, k, o.runFor, o.hold); err != nil {
		return nil, err
	}
	nodePods, err := nodePods(o.runFor)
	if err != nil {
		return nil, err
	}
	rec := newRecorder()
	rec.hold = o.hold
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := rec.watch(wctx, cfg, k, setup == setupFloor, o.runFor, nodePods); err != nil {
		return nil, err
	}
	r := &result{setup: setup, hold: o.hold}
	kueueBefore, err := procUsage(c.PID("kueue"))
	if err != nil {
		return nil, err
	}
	oursBefore, err := procUsage(c.PID("trainjob-kueue"))
	if err != nil {
		return nil, err
	}
	r.start = time.Now()
	mk := trainJobs
	if setup == setupFloor {
		mk = floorWorkloads(o.runFor)
	}
	if setup == setupOurs && o.profile > 0 {
		go savePprof(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", c.Port("ours-pprof"), int(o.profile.Seconds())), filepath.Join(o.Out, "ours-cpu.pprof"))
	}
	if setup == setupOurs && o.trace > 0 {
		go savePprof(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/trace?seconds=%d", c.Port("ours-pprof"), int(o.trace.Seconds())), filepath.Join(o.Out, "ours-trace.out"))
	}
	if err := submit(ctx, k, o.N, burstOf(o), o.rate, mk, rec); err != nil {
		return nil, err
	}
	if err := waitFinished(ctx, c, rec, setup, o, r); err != nil {
		return nil, err
	}
	r.end = time.Now()
	keepEvidence(ctx, c, setup, o, r)
	// A process that exited has no usage left to read: its figure stays 0,
	// and the set-up, unfinished, gets no ratio.
	if kueueAfter, err := procUsage(c.PID("kueue")); err == nil {
		r.kueue = usage{cpuSeconds: kueueAfter.cpuSeconds - kueueBefore.cpuSeconds, peakRSSMiB: kueueAfter.peakRSSMiB}
	} else if r.unfinished == nil {
		return nil, err
	}
	if oursAfter, err := procUsage(c.PID("trainjob-kueue")); err == nil {
		r.ours = usage{cpuSeconds: oursAfter.cpuSeconds - oursBefore.cpuSeconds, peakRSSMiB: oursAfter.peakRSSMiB}
	} else if r.unfinished == nil {
		return nil, err
	}
	cancel()
	if err := readRequests(c, r); err != nil {
		return nil, err
	}
	if err := readStarts(c, r); err != nil {
		return nil, err
	}
	r.jobs = rec.jobs
	return r, nil
}

// clusterFor brings up a fresh cluster for the set-up (replacing one a
// run before left), and what takes it down: nothing with -keep.
func clusterFor(ctx context.Context, root, setup string, o options) (*localcluster.Cluster, func(), error) {
	integration := map[string]string{setupFloor: localcluster.IntegrationNone, setupInTree: localcluster.IntegrationInTree, setupOurs: localcluster.IntegrationOurs}[setup]
	name := "bench-" + setup
	if err := localcluster.Down(root, name, os.Stderr); err != nil {
		return nil, nil, err
	}
	c, err := localcluster.Up(ctx, localcluster.Options{Name: name, Root: root, Progress: os.Stderr,
		Settings: localcluster.Settings{Integration: integration, TrainerVersion: o.Trainer, KueueVersion: o.Kueue,
			NoQueueCondition: o.noCondition && setup == setupOurs}})
	if err != nil {
		return nil, nil, err
	}
	if o.Keep {
		return c, func() {}, nil
	}
	return c, func() { _ = localcluster.Down(root, name, os.Stderr) }, nil
}

// waitFinished waits until every job finished, or the set-up stalled or
// lost a component (then r.unfinished says where its jobs stand), saying
// the progress every 10 s.
func waitFinished(ctx context.Context, c *localcluster.Cluster, rec *recorder, setup string, o options, r *result) error {
	deadline := time.Now().Add(o.timeout)
	lastReport := time.Now()
	var moved progress
	for rec.finishedCount() < o.N {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d jobs finished within %s (%s)", rec.finishedCount(), o.N, o.timeout, describeStates(rec.states()))
		}
		if gone := c.Exited(); len(gone) > 0 {
			r.unfinished = withExited(rec.states(), gone, func(name string) string { return lastWords(c.LogFile(name)) })
			fmt.Fprintf(os.Stderr, "   %s: STOPPED, %s: %s\n", setup, strings.Join(gone, ", ")+" exited", describeStates(r.unfinished))
			return nil
		}
		if moved.stalled(time.Now(), rec.finishedCount(), o.stall) {
			r.unfinished = rec.states()
			fmt.Fprintf(os.Stderr, "   %s: STALLED, no job finished for %s: %s\n", setup, o.stall, describeStates(r.unfinished))
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		if time.Since(lastReport) >= 10*time.Second {
			fmt.Fprintf(os.Stderr, "   %s: %d/%d finished\n", setup, rec.finishedCount(), o.N)
			lastReport = time.Now()
		}
	}
	return nil
}

// keepEvidence keeps what a reader needs after the cluster is gone: the
// manager's metrics (each controller's work-queue waits and work), and the
// components' logs of a set-up that did not finish.
func keepEvidence(ctx context.Context, c *localcluster.Cluster, setup string, o options, r *result) {
	if setup == setupOurs {
		if err := saveMetrics(ctx, c, filepath.Join(o.Out, "ours-metrics.prom")); err != nil {
			fmt.Fprintf(os.Stderr, "   %s: keeping the manager's metrics: %v\n", setup, err)
		}
	}
	if r.unfinished == nil {
		return
	}
	// What went wrong is in the components' logs, which Down deletes.
	if err := keepLogs(c, filepath.Join(o.Out, setup+"-logs")); err != nil {
		fmt.Fprintf(os.Stderr, "   %s: keeping the logs: %v\n", setup, err)
	} else {
		fmt.Fprintf(os.Stderr, "   %s: the components' logs are in %s\n", setup, filepath.Join(o.Out, setup+"-logs"))
	}
}

// readRequests reads Kueue's and our requests since the load began from
// the audit log (written synchronously: complete up to now).
func readRequests(c *localcluster.Cluster, r *result) error {
	kq, err := requests(c, kueueUser, r.start)
	if err != nil {
		return err
	}
	oq, err := requests(c, loadharness.OurUser, r.start)
	if err != nil {
		return err
	}
	r.kueueDry, r.kueueVerb, r.kueueStatus = kq.dryRuns, kq.byVerb, kq.statusByOwner
	r.ourDry, r.ourVerbs, r.ourStatus = oq.dryRuns, oq.byVerb, oq.statusByOwner
	return nil
}

// readStarts cuts each job's start in two from the audit log
// (splitStarts): the integration's side and its write's. The starter is
// the integration's process: ours, or Kueue's in the intree set-up.
func readStarts(c *localcluster.Cluster, r *result) error {
	starter := map[string]string{setupOurs: loadharness.OurUser, setupInTree: kueueUser}[r.setup]
	if starter == "" {
		return nil
	}
	events, err := localcluster.AuditEvents(c.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return !e.Received.Before(r.start) && (e.ObjectRef.Resource == "trainjobs" && e.User.Username == starter ||
			e.ObjectRef.Resource == "workloads" && e.ObjectRef.Subresource == "status" && e.User.Username == kueueUser)
	})
	if err != nil {
		return err
	}
	r.starts = splitStarts(events, starter)
	return nil
}

func kueueFinished() metav1.Condition {
	return metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: kueue.WorkloadFinishedReasonSucceeded, Message: "bench: done", LastTransitionTime: metav1.Now()}
}

// burstOf is how many of the jobs are created at once, the rest streamed
// at o.rate: half of them, but none in a harness-scale run. There Kueue,
// with its shipped client budget (50 queries a second), lost its leader
// lease 30 s into a burst of 7,500 bare Workloads and exited (the floor,
// no integration at all): every Workload is a status write of Kueue's,
// and its lease renewal waits behind them in the same rate limiter. A
// stream Kueue keeps up with measures the integrations, not that.
func burstOf(o options) int {
	if o.hold {
		return 0
	}
	return o.N / 2
}
