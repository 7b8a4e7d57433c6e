package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
)

const planUsage = `usage: kubectl trainjob-kueue plan -f FILE [--set PATH=VALUE]... [-n NAMESPACE] [-o text|json|yaml]

When would this TrainJob start, were it submitted now? Without creating
anything: the API server's admission answers a dry run of the create
(every webhook and policy: a refusal is said as the API server says it),
then the job as it would be stored is explained as explain does — the
PodSets Kueue would be told, the LocalQueue and ClusterQueue it lands on,
whether it fits and on which flavors (or, if never, which quota stops it)
— with its expected start: its ClusterQueue played forward with it queued
behind every job of its priority already waiting. --set edits the
manifest first, to compare: a path under spec (trainer.numNodes=2), or
from spec. or metadata.; "\." is a dot inside a key
(trainer.resourcesPerNode.limits.nvidia\.com/gpu=4). Exit code 1 when the
API server would refuse it.
`

// planMain runs the plan command; it returns the exit code.
func planMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, planUsage); fs.PrintDefaults() }
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	namespace := fs.String("n", "", "namespace, when the manifest names none (default: the kubeconfig context's)")
	file := fs.String("f", "", "the TrainJob manifest")
	output := fs.String("o", "text", "output: text, json or yaml")
	var sets setFlags
	fs.Var(&sets, "set", "PATH=VALUE: edit the manifest first (repeatable)")
	if err := fs.Parse(args); err != nil {
		return helpOr2(err)
	}
	if *file == "" || fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	if err := runPlan(context.Background(), *kubeconfig, *namespace, *file, sets, *output, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "plan: %v\n", err)
		return 1
	}
	return 0
}

func runPlan(ctx context.Context, kubeconfig, namespace, file string, sets []string, output string, stdout, stderr io.Writer) error {
	c, cfg, namespace, err := kubeClient(kubeconfig, namespace, false)
	if err != nil {
		return err
	}
	job, err := readManifest(file)
	if err != nil {
		return err
	}
	if job.Namespace == "" {
		job.Namespace = namespace
	}
	if job, err = applySets(job, sets); err != nil {
		return err
	}
	stored, note, err := explain.DryRun(ctx, c, job)
	if errors.Is(err, explain.ErrRefused) {
		return fmt.Errorf("TrainJob %s/%s would not be created: %w", job.Namespace, job.Name, err)
	}
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(stderr, "plan: %s\n", note)
	}
	positions, err := explain.NewVisibilityPositions(cfg)
	if err != nil {
		return err
	}
	ex, err := (&explain.Explainer{Client: c, Positions: positions}).Explain(ctx, stored)
	if err != nil {
		return err
	}
	if output == "text" && note == "" {
		fmt.Fprintln(stdout, "Dry run:  accepted by the API server's admission; not created")
	}
	return writeExplanation(ex, output, stdout)
}
