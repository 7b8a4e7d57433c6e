package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/migrate"
)

const migrateUsage = `usage: kubectl trainjob-kueue migrate --check [--to ours|intree] [-n NAMESPACE | -A] [--kueue-config FILE]

Before switching a cluster from Kueue's built-in TrainJob integration to
trainjob-kueue (--to ours, the default) or back (--to intree;
docs/install.md), says for every TrainJob what the switch will do to it,
and why: adopted as it is, adopted and mended at its next stop, its
Workload corrected in place, re-created (losing its place in the queue),
or, for a running job, stopped and queued again. Exits 1 when a running
job would be stopped. --to ours: one list request per kind, however many
jobs. --to intree computes each queued or running job's PodSets with
Kueue's built-in integration's own code (Kueue v0.19.2's): one runtime
read and one dry-run Workload create (nothing stored) per job. Changes
nothing, with your kubeconfig's identity.
`

// migrateMain runs the migrate command; it returns the exit code.
func migrateMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, migrateUsage); fs.PrintDefaults() }
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	namespace := fs.String("n", "", "namespace (default: the kubeconfig context's)")
	all := fs.Bool("A", false, "every namespace")
	check := fs.Bool("check", false, "say what the switch would do, changing nothing (the only mode)")
	kueueConfig := fs.String("kueue-config", "", "Kueue's Configuration file, to know whether its JobSet integration is on (without it, it is taken as on)")
	to := fs.String("to", migrate.ToOurs, "the switch's direction: ours (from Kueue's built-in integration to trainjob-kueue) or intree (the way back)")
	if err := fs.Parse(args); err != nil {
		return helpOr2(err)
	}
	if fs.NArg() != 0 || !*check || (*to != migrate.ToOurs && *to != migrate.ToInTree) {
		fs.Usage()
		return 2
	}
	c, _, ns, err := kubeClient(*kubeconfig, *namespace, *all)
	if err != nil {
		fmt.Fprintf(stderr, "migrate: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := migrate.Options{Namespace: ns, To: *to}
	if *to == migrate.ToInTree {
		if opts.InTree, err = migrate.InTreePodSets(ctx, c); err != nil {
			fmt.Fprintf(stderr, "migrate: %v\n", err)
			return 1
		}
	}
	if *kueueConfig != "" {
		cfg, err := discovery.LoadKueueConfig(*kueueConfig)
		if err != nil {
			fmt.Fprintf(stderr, "migrate: --kueue-config: %v\n", err)
			return 2
		}
		opts.JobSetIntegrationOff = !discovery.JobSetIntegration(&cfg)
	}
	verdicts, err := migrate.Check(ctx, c, opts)
	if err != nil {
		fmt.Fprintf(stderr, "migrate: %v\n", err)
		return 1
	}
	if err := migrate.Write(stdout, verdicts); err != nil {
		fmt.Fprintf(stderr, "migrate: %v\n", err)
		return 1
	}
	if migrate.Stops(verdicts) > 0 {
		return 1
	}
	return 0
}
