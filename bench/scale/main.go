// Command scale measures trainjob-kueue with thousands of queued TrainJobs
// on the local control plane (`make scale`): N TrainJobs of a mix of
// runtimes queue behind a ClusterQueue without GPU quota; waves of quota
// then admit a few hundred. Measured from outside the manager: its and
// Kueue's memory over time (/proc, their metrics endpoints), admission to
// unsuspend latency per wave (watch events), the requests a runtime edit
// under thousands of jobs causes, and a restart with all of them present:
// time to Ready, to its first idle moment, and the requests of the minute
// after (the API server's audit log). Results: .bench/scale.json and
// .bench/scale.png.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

func main() {
	var o options
	o.register(flag.CommandLine)
	flag.Parse()
	loadharness.Main("scale", func(ctx context.Context) error { return run(ctx, o) })
}

type options struct {
	loadharness.Flags
	wave  int
	waves int
	idle  time.Duration
	name  string
	rate  float64
}

// register the flags on fs.
func (o *options) register(fs *flag.FlagSet) {
	o.Register(fs, 10000, "TrainJobs created; all queue", "leave the cluster running afterwards")
	fs.IntVar(&o.wave, "wave", 100, "jobs each wave of quota admits")
	fs.IntVar(&o.waves, "waves", 3, "waves of admission")
	fs.DurationVar(&o.idle, "idle", time.Minute, "how long the idle manager is watched after its cold start")
	fs.StringVar(&o.name, "cluster", "scale", "local cluster name")
	fs.Float64Var(&o.rate, "rate", 20, "TrainJobs created a second, open-loop (a create is sent every 1/rate s whether or not the ones before were answered)")
}

func run(ctx context.Context, o options) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	admitGPUs := int64(0)
	for i := range o.wave * o.waves {
		admitGPUs += loadharness.GPUsOf(i)
	}
	if err := localcluster.Down(root, o.name, os.Stderr); err != nil {
		return err
	}
	c, err := localcluster.Up(ctx, localcluster.Options{Name: o.name, Root: root, Progress: os.Stderr,
		Settings: localcluster.Settings{Integration: localcluster.IntegrationOurs, TrainerVersion: o.Trainer, KueueVersion: o.Kueue}})
	if err != nil {
		return err
	}
	if !o.Keep {
		defer func() { _ = localcluster.Down(root, o.name, os.Stderr) }()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	// The load generator is not what is measured: let it go fast.
	cfg.QPS, cfg.Burst = 500, 1000
	k, err := client.New(cfg, client.Options{Scheme: fixtures.Scheme()})
	if err != nil {
		return err
	}
	if err := setUp(ctx, k, admitGPUs); err != nil {
		return err
	}
	rec := newRecorder()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := rec.watch(wctx, cfg, k); err != nil {
		return err
	}
	token, err := c.MetricsToken(ctx)
	if err != nil {
		return err
	}
	s := &sampler{c: c, start: time.Now(), rec: rec, token: token}
	for _, port := range []string{"ours-metrics", "kueue-metrics"} {
		if _, err := c.Scrape(fmt.Sprintf("https://127.0.0.1:%d/metrics", c.Port(port)), token); err != nil {
			return fmt.Errorf("scraping %s: %w", port, err)
		}
	}
	s.setPhase("create")
	go s.run(wctx, 2*time.Second)
	sr := &scaleRun{o: o, c: c, k: k, rec: rec, s: s, r: &report{Jobs: o.N, Trainer: o.Trainer, Kueue: o.Kueue}}
	for _, phase := range []func(context.Context) error{sr.queueAll, sr.admitWaves, sr.runtimeEdit, sr.coldStart} {
		if err := phase(ctx); err != nil {
			return err
		}
	}
	s.take()
	cancel()

	sr.r.fill(s, rec)
	if err := sr.r.write(filepath.Join(o.Out, "scale.json")); err != nil {
		return err
	}
	if err := plot(filepath.Join(o.Out, "scale.png"), s, rec); err != nil {
		return err
	}
	sr.r.print(os.Stdout)
	fmt.Printf("\n%s/scale.json, %s/scale.png\n", o.Out, o.Out)
	return nil
}

// scaleRun is one run's cluster, load and measurements, through its
// phases.
type scaleRun struct {
	o   options
	c   *localcluster.Cluster
	k   client.Client
	rec *recorder
	s   *sampler
	r   *report
}

// queueAll creates the N TrainJobs, all queued, and waits until each has
// its Workload and Trainer has reported on each.
func (sr *scaleRun) queueAll(ctx context.Context) error {
	o, rec, r := sr.o, sr.rec, sr.r
	var created atomic.Int64
	go func() {
		for ctx.Err() == nil && created.Load() < int64(o.N) {
			time.Sleep(15 * time.Second)
			fmt.Fprintf(os.Stderr, "   %d/%d created, %d Workloads\n", created.Load(), o.N, rec.queued())
		}
	}()
	t0 := time.Now()
	mk := func(i int) (client.Object, error) {
		return fixtures.TrainJob(ns, loadharness.JobName(i), loadharness.RuntimeOf(i), "lq"), nil
	}
	if err := loadharness.Stream(ctx, sr.k, loadharness.StreamOptions{N: o.N, Rate: o.rate}, mk, func(string, time.Time) { created.Add(1) }); err != nil {
		return err
	}
	r.CreateS = time.Since(t0).Seconds()
	sr.s.setPhase("queue")
	if err := waitFor(ctx, 30*time.Minute, func() bool { return rec.queued() >= o.N }); err != nil {
		return fmt.Errorf("%d of %d Workloads: %w", rec.queued(), o.N, err)
	}
	r.AllQueuedS = time.Since(t0).Seconds()
	// Trainer works through the jobs at its own pace (about 12 a second
	// on the 2-core machine, fewer while jobs are being created): its
	// status write on each, after it took the job's runtime snapshot,
	// wakes our manager to read the snapshot. Until Trainer is through,
	// our manager follows it, and is not idle.
	sr.s.setPhase("trainer")
	if err := waitFor(ctx, 30*time.Minute, func() bool { return rec.reportedJobs() >= o.N }); err != nil {
		return fmt.Errorf("only %d of %d TrainJobs reported on by Trainer: %w", rec.reportedJobs(), o.N, err)
	}
	r.TrainerReportedS = time.Since(t0).Seconds()
	// Let both managers settle with everything queued.
	sleep(ctx, 30*time.Second)
	return nil
}

// admitWaves raises the GPU quota wave by wave: Kueue picks which queued
// jobs fit (about o.wave of them); a wave is over when admissions stop and
// every admitted job was started.
func (sr *scaleRun) admitWaves(ctx context.Context) error {
	quota := int64(0)
	for w := range sr.o.waves {
		sr.s.setPhase(fmt.Sprintf("wave %d", w+1))
		for i := w * sr.o.wave; i < (w+1)*sr.o.wave; i++ {
			quota += loadharness.GPUsOf(i)
		}
		if err := setGPUQuota(ctx, sr.k, quota); err != nil {
			return err
		}
		prev, _ := sr.rec.counts()
		seen, since := prev, time.Now()
		if err := waitFor(ctx, 10*time.Minute, func() bool {
			a, st := sr.rec.counts()
			if a != seen {
				seen, since = a, time.Now()
			}
			return a > prev && st >= a && time.Since(since) >= 10*time.Second
		}); err != nil {
			a, st := sr.rec.counts()
			return fmt.Errorf("wave %d: %d admitted, %d of them started: %w", w+1, a, st, err)
		}
	}
	sleep(ctx, 20*time.Second)
	return nil
}

// runtimeEdit edits the runtime under a third of the jobs, once the
// manager is done with the waves and with the Workloads' first status
// writes (Kueue v0.19's PodsReady condition, one per Workload, paced by
// the client's QPS): what the next minute shows is then the edit's.
func (sr *scaleRun) runtimeEdit(ctx context.Context) error {
	if _, err := waitIdle(ctx, sr.s, 0, 15*time.Minute); err != nil {
		return fmt.Errorf("manager never idle before the runtime edit: %w", err)
	}
	sr.s.setPhase("runtime edit")
	before := sr.s.take()
	editAt := time.Now()
	if err := editRuntime(ctx, sr.k, "torch"); err != nil {
		return err
	}
	sleep(ctx, time.Minute)
	after := sr.s.take()
	byVerb, err := requests(sr.c, loadharness.OurUser, editAt, editAt.Add(time.Minute))
	if err != nil {
		return err
	}
	sr.r.RuntimeEdit = &burst{Jobs: sr.o.N / 3, Reconciles: int(after.OursReconcile - before.OursReconcile), Requests: loadharness.Sum(byVerb), Writes: writes(byVerb), ByVerb: byVerb}
	edited, err := localcluster.AuditEvents(sr.c.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return !e.Received.Before(editAt) && e.Received.Before(editAt.Add(time.Minute))
	})
	if err != nil {
		return err
	}
	ew := classifyWrites(edited, loadharness.OurUser, sr.rec.jobOf)
	sr.r.RuntimeEditWrites = &ew
	return nil
}

// coldStart restarts the manager with everything present, waits until it
// is ready and then idle (every job reconciled once), and measures the
// restart's requests and the idle ones after.
func (sr *scaleRun) coldStart(ctx context.Context) error {
	o, c, r := sr.o, sr.c, sr.r
	sr.s.setPhase("restart")
	restartAt := time.Now()
	if err := c.Rollout("trainjob-kueue"); err != nil {
		return err
	}
	started := time.Now()
	readyURL := fmt.Sprintf("http://127.0.0.1:%d/readyz", c.Port("ours-health"))
	if err := waitFor(ctx, 5*time.Minute, func() bool { return ready(readyURL) }); err != nil {
		return fmt.Errorf("restarted manager not ready: %w", err)
	}
	r.ColdStartReadyS = time.Since(started).Seconds()
	last, err := waitIdle(ctx, sr.s, o.N, 15*time.Minute)
	if err != nil {
		return fmt.Errorf("restarted manager never idle (%v reconciles): %w", last, err)
	}
	idleAt := time.Now()
	r.ColdStartIdleS = idleAt.Sub(started).Seconds()
	sr.s.setPhase("idle")
	sleep(ctx, o.idle)
	byVerb, err := requests(c, loadharness.OurUser, restartAt, idleAt)
	if err != nil {
		return err
	}
	r.Restart = &burst{Jobs: o.N, Reconciles: int(last), Requests: loadharness.Sum(byVerb), Writes: writes(byVerb), ByVerb: byVerb}
	all, err := localcluster.AuditEvents(c.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return !e.Received.Before(restartAt) && e.Received.Before(idleAt)
	})
	if err != nil {
		return err
	}
	rw := classifyWrites(all, loadharness.OurUser, sr.rec.jobOf)
	r.RestartWrites = &rw
	if byVerb, err = requests(c, loadharness.OurUser, idleAt, idleAt.Add(o.idle)); err != nil {
		return err
	}
	r.IdleRequestsPerMin = float64(loadharness.Sum(byVerb)) / o.idle.Minutes()
	r.IdleWritesPerMin = float64(writes(byVerb)) / o.idle.Minutes()
	r.IdleByVerb = byVerb
	return nil
}

// waitIdle waits until the manager reconciled at least min jobs since it
// started and, for 10 s, no more than a job a second (Kueue keeps touching
// the status of thousands of pending Workloads, and each touch is a
// reconcile). It returns the manager's reconciles so far.
func waitIdle(ctx context.Context, s *sampler, min int, timeout time.Duration) (float64, error) {
	var last float64
	type point struct {
		at time.Time
		n  float64
	}
	var window []point
	err := waitFor(ctx, timeout, func() bool {
		x := s.take()
		last = x.OursReconcile
		now := time.Now()
		window = append(window, point{now, last})
		for len(window) > 1 && now.Sub(window[1].at) >= 10*time.Second {
			window = window[1:]
		}
		return int(last) >= min && now.Sub(window[0].at) >= 10*time.Second && last-window[0].n <= now.Sub(window[0].at).Seconds()
	})
	return last, err
}

func waitFor(ctx context.Context, timeout time.Duration, done func() bool) error {
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
