package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// migrate answers its usage errors before it reads any cluster: --help
// exits 0 as kubectl's plugins do, a missing --check or a Kueue
// configuration it can't read exit 2 with the reason, and a cluster it
// can't reach exits 1.
func TestMigrateUsage(t *testing.T) {
	dir := t.TempDir()
	unreachable := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(unreachable, []byte(strings.Replace(testKubeconfig, "127.0.0.1:6443", "127.0.0.1:1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	badConfig := filepath.Join(dir, "kueue.yaml")
	if err := os.WriteFile(badConfig, []byte("integrations: ["), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		code int
		says string
	}{
		"--help":                      {args: []string{"--help"}, code: 0, says: "usage: kubectl trainjob-kueue migrate --check"},
		"no --check":                  {args: []string{"-A"}, code: 2, says: "usage:"},
		"a direction it doesn't know": {args: []string{"--check", "--to", "sideways"}, code: 2, says: "--to ours|intree"},
		"an argument":                 {args: []string{"--check", "extra"}, code: 2, says: "usage:"},
		"an unreadable Kueue config":  {args: []string{"--check", "--kubeconfig", unreachable, "--kueue-config", badConfig}, code: 2, says: "--kueue-config"},
		"a cluster out of reach":      {args: []string{"--check", "--kubeconfig", unreachable}, code: 1, says: "migrate:"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errs bytes.Buffer
			if code := migrateMain(tc.args, &out, &errs); code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errs.String())
			}
			if !strings.Contains(errs.String(), tc.says) {
				t.Errorf("stderr %q does not say %q", errs.String(), tc.says)
			}
		})
	}
}
