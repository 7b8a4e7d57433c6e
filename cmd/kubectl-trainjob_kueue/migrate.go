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

const migrateUsage = `usage: kubectl trainjob-kueue migrate --check [-n NAMESPACE | -A] [--kueue-config FILE]

Before switching a cluster from Kueue's built-in TrainJob integration to
trainjob-kueue (docs/install.md), says for every TrainJob what the switch
will do to it, and why: adopted as it is, adopted and mended at its next
stop, its Workload corrected in place, re-created (losing its place in the
queue), or, for a running job, stopped and queued again. Exits 1 when a
running job would be stopped. One list request per kind, however many
jobs. Reads only, with your kubeconfig's identity.
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
	if err := fs.Parse(args); err != nil {
		return helpOr2(err)
	}
	if fs.NArg() != 0 || !*check {
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
	opts := migrate.Options{Namespace: ns}
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
