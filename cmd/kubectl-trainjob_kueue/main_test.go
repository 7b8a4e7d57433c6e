package main

import (
	"bytes"
	"strings"
	"testing"
)

// The plugin's commands and help, as krew users type them: help and
// version succeed, a misuse exits 2 with the usage.
func TestRun(t *testing.T) {
	for name, tc := range map[string]struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		"no command":          {code: 2, stderr: "usage: kubectl trainjob-kueue explain"},
		"--help":              {args: []string{"--help"}, code: 0, stdout: "kubectl trainjob-kueue migrate --check"},
		"help":                {args: []string{"help"}, code: 0, stdout: "usage: kubectl trainjob-kueue"},
		"version":             {args: []string{"version"}, code: 0, stdout: "kubectl-trainjob_kueue dev (commit unknown)"},
		"an unknown command":  {args: []string{"describe"}, code: 2, stderr: `unknown command "describe"`},
		"explain --help":      {args: []string{"explain", "--help"}, code: 0, stderr: "usage: kubectl trainjob-kueue explain"},
		"list --help":         {args: []string{"list", "--help"}, code: 0, stderr: "usage: kubectl trainjob-kueue list"},
		"migrate --help":      {args: []string{"migrate", "--help"}, code: 0, stderr: "usage: kubectl trainjob-kueue migrate"},
		"explain, no job":     {args: []string{"explain"}, code: 2, stderr: "usage: kubectl trainjob-kueue explain"},
		"explain, a bad flag": {args: []string{"explain", "--bogus"}, code: 2, stderr: "flag provided but not defined"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stdout %q, stderr %q; want them to say %q and %q", stdout.String(), stderr.String(), tc.stdout, tc.stderr)
			}
		})
	}
}
