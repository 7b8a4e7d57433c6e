// Command kubectl-trainjob_kueue is trainjob-kueue's kubectl plugin, apart
// from the manager (as Kueue keeps kueuectl): kubectl trainjob-kueue
// explain, list, plan, migrate --check and version. Every command changes
// nothing, with the kubeconfig's identity (plan dry-runs the create of its
// TrainJob; migrate --check --to intree asks the API server for Workload
// defaults with dry runs). Install it
// with krew (make krew writes the manifest bin/krew/trainjob-kueue.yaml
// and an archive per platform) or put it on PATH (make plugin).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// version and commit are stamped by the build (-ldflags -X main.version=…
// -X main.commit=…).
var (
	version = "dev"
	commit  = "unknown"
)

const usage = `kubectl trainjob-kueue: TrainJobs under Kueue, read from your cluster.

usage: kubectl trainjob-kueue explain NAMESPACE/NAME | NAME [-n NAMESPACE] | -f FILE [-o text|json|yaml]
       kubectl trainjob-kueue list [-n NAMESPACE | -A] [-l SELECTOR] [-o wide|json|yaml] [--watch]
       kubectl trainjob-kueue plan -f FILE [--set PATH=VALUE]... [-n NAMESPACE] [-o text|json|yaml]
       kubectl trainjob-kueue migrate --check [-n NAMESPACE | -A] [--kueue-config FILE]
       kubectl trainjob-kueue version

  explain   why a TrainJob is (not) admitted, per role, and what it would take
  list      every TrainJob's queue state at a glance
  plan      when a TrainJob would start were it submitted now, without creating it
  migrate   what switching from Kueue's built-in TrainJob integration does to each job
  version   the plugin's version

kubectl trainjob-kueue COMMAND --help says more.
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run runs one command; it returns the exit code: 0 done, 1 failed, 2
// misused.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "explain":
		return explainMain(args[1:], stdout, stderr)
	case "list":
		return listMain(args[1:], stdout, stderr)
	case "plan":
		return planMain(args[1:], stdout, stderr)
	case "migrate":
		return migrateMain(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "kubectl-trainjob_kueue %s (commit %s)\n", version, commit)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "unknown command %q\n\n%s", args[0], usage)
	return 2
}

// helpOr2 is the exit code of a command whose flags did not parse: 0 when
// help was asked for (and printed), 2 for a misuse.
func helpOr2(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}
