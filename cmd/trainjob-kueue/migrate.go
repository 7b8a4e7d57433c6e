package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/trainjob-kueue/trainjob-kueue/migrate"
)

const migrateUsage = `usage: trainjob-kueue migrate --check [-n NAMESPACE | -A]

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
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
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
	verdicts, err := migrate.Check(ctx, c, migrate.Options{Namespace: ns})
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
