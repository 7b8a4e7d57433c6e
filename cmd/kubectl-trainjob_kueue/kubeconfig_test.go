package main

import (
	"os"
	"path/filepath"
	"testing"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: team-a}
current-context: ctx
`

// A read-only command reads the namespace it is given, else the
// context's, and every namespace with -A.
func TestKubeClientNamespace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		namespace string
		all       bool
		want      string
	}{
		"the context's":  {want: "team-a"},
		"the one given":  {namespace: "team-b", want: "team-b"},
		"every one (-A)": {namespace: "team-b", all: true, want: ""},
	} {
		t.Run(name, func(t *testing.T) {
			c, cfg, ns, err := kubeClient(path, tc.namespace, tc.all)
			if err != nil {
				t.Fatal(err)
			}
			if c == nil || cfg.Host != "https://127.0.0.1:6443" || ns != tc.want {
				t.Errorf("host %q, namespace %q; want the kubeconfig's server and %q", cfg.Host, ns, tc.want)
			}
		})
	}
	if _, _, _, err := kubeClient(filepath.Join(t.TempDir(), "missing"), "", false); err == nil {
		t.Error("a kubeconfig that does not exist gave a client")
	}
}
