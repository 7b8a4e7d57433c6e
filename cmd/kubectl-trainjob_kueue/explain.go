package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

const explainUsage = `usage: kubectl trainjob-kueue explain NAMESPACE/NAME | NAME [-n NAMESPACE] | -f FILE [-o text|json|yaml]

Explains a TrainJob's queueing: per role the pods, their requests and the
flavor assigned or the candidate flavors with room; the ClusterQueue's
quota; the position in the queue when Kueue's visibility API is served; and
a verdict. With -f, a manifest not created yet is explained as if it were
queued now (plan -f also asks the API server's admission, and takes
--set). Reads only, with your kubeconfig's identity.
`

// explainMain runs the explain command; it returns the exit code.
func explainMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, explainUsage); fs.PrintDefaults() }
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	namespace := fs.String("n", "", "namespace (default: the kubeconfig context's)")
	file := fs.String("f", "", "a TrainJob manifest to explain before creating it")
	output := fs.String("o", "text", "output: text, json or yaml")
	// Flags may follow the job's name, as kubectl users write them.
	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return helpOr2(err)
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if valid := (*file != "" && len(positional) == 0) || (*file == "" && len(positional) == 1); !valid {
		fs.Usage()
		return 2
	}
	if err := runExplain(context.Background(), *kubeconfig, *namespace, *file, strings.Join(positional, ""), *output, stdout); err != nil {
		fmt.Fprintf(stderr, "explain: %v\n", err)
		return 1
	}
	return 0
}

func runExplain(ctx context.Context, kubeconfig, namespace, file, name, output string, stdout io.Writer) error {
	c, cfg, namespace, err := kubeClient(kubeconfig, namespace, false)
	if err != nil {
		return err
	}
	positions, err := explain.NewVisibilityPositions(cfg)
	if err != nil {
		return err
	}
	e := &explain.Explainer{Client: c, Positions: positions}
	var job *trainjob.TrainJob
	if file != "" {
		if job, err = readManifest(file); err != nil {
			return err
		}
		if job.Namespace == "" {
			job.Namespace = namespace
		}
	} else {
		if ns, n, ok := strings.Cut(name, "/"); ok {
			namespace, name = ns, n
		}
		if job, err = e.Get(ctx, namespace, name); err != nil {
			return err
		}
	}
	ex, err := e.Explain(ctx, job)
	if err != nil {
		return err
	}
	return writeExplanation(ex, output, stdout)
}

// writeExplanation prints ex as text, json or yaml.
func writeExplanation(ex explain.Explanation, output string, stdout io.Writer) error {
	switch output {
	case "text":
		return ex.WriteText(stdout)
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ex)
	case "yaml":
		data, err := yaml.Marshal(ex)
		if err != nil {
			return err
		}
		_, err = stdout.Write(data)
		return err
	}
	return fmt.Errorf("-o %s: use text, json or yaml", output)
}

func readManifest(path string) (*trainjob.TrainJob, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// Fields trainjob-kueue does not model are fine; the kind is not.
	job := &trainjob.TrainJob{}
	if err := yaml.Unmarshal(data, job); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if job.Kind != "TrainJob" {
		return nil, fmt.Errorf("%s: kind %q, want a TrainJob", path, job.Kind)
	}
	// Not created: no UID, so no Workload is looked for.
	job.UID = ""
	return job, nil
}
