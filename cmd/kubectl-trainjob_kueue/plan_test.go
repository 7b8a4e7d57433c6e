package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plan as users misuse it: each answer is said before anything is asked
// of the cluster (the kubeconfig here names a server that is not there).
func TestPlanAnswersAMisuseClearly(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	job := filepath.Join(dir, "job.yaml")
	notAJob := filepath.Join(dir, "jobset.yaml")
	for path, data := range map[string]string{
		kubeconfig: testKubeconfig,
		job:        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: llama}\nspec: {runtimeRef: {name: torch}}\n",
		notAJob:    "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\n",
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		args   []string
		code   int
		stderr string
	}{
		"--help":                 {args: []string{"--help"}, code: 0, stderr: "usage: kubectl trainjob-kueue plan -f FILE"},
		"no manifest":            {args: []string{}, code: 2, stderr: "usage: kubectl trainjob-kueue plan"},
		"a job's name":           {args: []string{"-f", job, "llama"}, code: 2, stderr: "usage: kubectl trainjob-kueue plan"},
		"not a TrainJob":         {args: []string{"-f", notAJob}, code: 1, stderr: `kind "JobSet", want a TrainJob`},
		"a --set, no =":          {args: []string{"-f", job, "--set", "trainer.numNodes"}, code: 1, stderr: "--set trainer.numNodes: want PATH=VALUE, e.g. --set trainer.numNodes=2"},
		"a --set of a bad value": {args: []string{"-f", job, "--set", "trainer.numNodes=two"}, code: 1, stderr: "the edited job is not a TrainJob"},
		"no such manifest":       {args: []string{"-f", filepath.Join(dir, "missing.yaml")}, code: 1, stderr: "missing.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"plan", "--kubeconfig", kubeconfig}, tc.args...), &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q; want it to say %q", stderr.String(), tc.stderr)
			}
		})
	}
}
