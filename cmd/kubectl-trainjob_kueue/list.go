package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/overview"
)

const listUsage = `usage: kubectl trainjob-kueue list [-n NAMESPACE | -A] [-l SELECTOR] [-o wide|json|yaml] [--watch]

Lists TrainJobs with their queue state at a glance: queue, state (the words
of the trainjob_kueue_trainjobs metric and of explain: NotQueued, Queued,
Requeued, WaitingForRuntime, HeldByPolicy, HeldOnWorker, Inactive,
QuotaReserved, Admitted, Running, Evicted, Finished, Failed), position in
the ClusterQueue where
Kueue's visibility API is served, flavors, pods running/booked, GPUs, how
long each waited and how often it was preempted; -o wide, json and yaml
add when each waiting job is expected to start (its ClusterQueue played
forward: running jobs end as they report or as their runtime's finished
jobs ran; preemption by a job arriving later can't be foreseen). One list
per kind, 500 objects a page, however many jobs; --watch with -A lists
once and then follows the changes (informers), so a tick reads memory. Reads only, with your kubeconfig's
identity.
`

// listMain runs the list command; it returns the exit code.
func listMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, listUsage); fs.PrintDefaults() }
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	namespace := fs.String("n", "", "namespace (default: the kubeconfig context's)")
	all := fs.Bool("A", false, "every namespace")
	selector := fs.String("l", "", "label selector of the TrainJobs, as kubectl's -l")
	output := fs.String("o", "", "output: wide, json or yaml (default: a table)")
	watch := fs.Bool("watch", false, "list again every --interval until interrupted")
	fs.BoolVar(watch, "w", false, "short for --watch")
	interval := fs.Duration("interval", 2*time.Second, "how often --watch lists")
	if err := fs.Parse(args); err != nil {
		return helpOr2(err)
	}
	if fs.NArg() != 0 || *interval <= 0 {
		fs.Usage()
		return 2
	}
	sel, err := labels.Parse(*selector)
	if err != nil {
		fmt.Fprintf(stderr, "list: -l %s: %v\n", *selector, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	l, err := newLister(ctx, *kubeconfig, *namespace, *all, *watch, sel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "list: %v\n", err)
		return 1
	}
	for {
		if err := l.list(ctx, stdout, stderr, *output, *watch); err != nil {
			if ctx.Err() != nil {
				return 0
			}
			fmt.Fprintf(stderr, "list: %v\n", err)
			return 1
		}
		if !*watch {
			return 0
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(*interval):
		}
	}
}

// watchSyncWithin bounds the first sync of list --watch -A's informers.
const watchSyncWithin = 30 * time.Second

// lister lists TrainJobs of one namespace, or of all.
type lister struct {
	client  client.Reader
	pending overview.Pending
	opts    overview.Options
	all     bool
}

// newLister reads through the API server; watching every namespace, from
// informers (overview.Watching), so only the first listing lists.
func newLister(ctx context.Context, kubeconfig, namespace string, all, watch bool, sel labels.Selector, stderr io.Writer) (*lister, error) {
	c, cfg, namespace, err := kubeClient(kubeconfig, namespace, all)
	if err != nil {
		return nil, err
	}
	positions, err := explain.NewVisibilityPositions(cfg)
	if err != nil {
		return nil, err
	}
	var reader client.Reader = c
	if watch && all {
		if reader, err = overview.Watching(ctx, cfg, c.Scheme(), watchSyncWithin); err != nil {
			fmt.Fprintf(stderr, "list: listing every tick: %v\n", err)
			reader = c
		}
	}
	return &lister{client: reader, pending: positions, all: all, opts: overview.Options{Namespace: namespace, Selector: sel}}, nil
}

// list prints the jobs once; watching, a terminal gets a fresh screen each
// time, a log a blank line between listings.
func (l *lister) list(ctx context.Context, stdout, stderr io.Writer, output string, watching bool) error {
	in, notes, err := overview.Fetch(ctx, l.client, l.pending, l.opts, time.Now())
	if err != nil {
		return err
	}
	if watching {
		if isTerminal(stdout) {
			fmt.Fprint(stdout, "\033[H\033[2J")
		} else {
			fmt.Fprintln(stdout)
		}
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "list: %s\n", n)
	}
	rows := overview.Rows(in)
	if output != "" {
		for _, n := range l.expect(ctx, in, rows) {
			fmt.Fprintf(stderr, "list: %s\n", n)
		}
	}
	return overview.Write(stdout, rows, output, l.all)
}

// expect fills the expected start of each waiting row (-o wide, json,
// yaml): the ClusterQueues they wait in played forward once each. A list
// of every namespace's jobs already read what the forecast reads; any
// other reads it again (a ClusterQueue serves every namespace).
func (l *lister) expect(ctx context.Context, in overview.Input, rows []overview.Row) (notes []string) {
	var queues []string
	for _, r := range rows {
		if r.State.Waiting() && r.ClusterQueue != "" && !slices.Contains(queues, r.ClusterQueue) {
			queues = append(queues, r.ClusterQueue)
		}
	}
	if len(queues) == 0 {
		return nil
	}
	e := &explain.Explainer{Client: l.client}
	snapshot := explain.Snapshot{Workloads: in.Workloads, TrainJobs: in.Jobs, LocalQueues: in.LocalQueues}
	if !l.all || (l.opts.Selector != nil && !l.opts.Selector.Empty()) {
		var err error
		if snapshot, err = e.Snapshot(ctx); err != nil {
			return []string{"no expected start: " + err.Error()}
		}
	}
	starts := e.ForecastsFrom(ctx, snapshot, queues)
	now := time.Now()
	for i := range rows {
		if s, ok := starts[rows[i].Namespace+"/"+rows[i].Name]; ok && rows[i].State.Waiting() {
			rows[i].ExpectedStart = forecast.Expected(s, now)
		}
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
