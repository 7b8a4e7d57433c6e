package layers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A private key or a kubeconfig with credentials in the tree is a key
// every clone and every fork holds. Clusters, benches and tests write them
// under .cluster/ (ignored at any depth); none is ever tracked.
func TestNoPrivateKeyOrKubeconfigIsTracked(t *testing.T) {
	out, err := exec.Command("git", "-C", "..", "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("listing the tracked files: %v", err)
	}
	for _, path := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		info, err := os.Stat(filepath.Join("..", path))
		if os.IsNotExist(err) || err == nil && info.IsDir() {
			continue // deleted in the work tree, or a link to a folder (its files are listed)
		}
		data, err := os.ReadFile(filepath.Join("..", path))
		if err != nil {
			t.Fatal(err)
		}
		if why := secretIn(path, data); why != "" {
			t.Errorf("%s is tracked and %s: remove it (git rm --cached) and keep it under an ignored .cluster/", path, why)
		}
	}
}

// The rule finds each kind of secret, and passes what only names them.
func TestTheSecretRuleFindsKeysAndKubeconfigs(t *testing.T) {
	// Written in parts, so this file holds no key of its own.
	begin := func(kind string) string { return "-----BEGIN " + kind + " KEY-----" }
	cases := []struct {
		path, data string
		found      bool
	}{
		{"certs/sa.key", begin("RSA PRIVATE") + "\nMIIE\n", true},
		{"x/tls.pem", begin("EC PRIVATE") + "\nMHc\n", true},
		{"a/kubeconfig", "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-key-data: LS0t\n", true},
		{"a/kubeconfig", "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: abc\n", true},
		{"hack/cluster/certs.go", "const header = \"-----BEGIN \" + \"PRIVATE KEY-----\"\n", false},
		{"docs/install.md", "write the kubeconfig with `client-key-data` from the Secret\n", false},
		{"certs/ca.crt", "-----BEGIN CERTIFICATE-----\nMIIC\n", false},
	}
	for _, c := range cases {
		if got := secretIn(c.path, []byte(c.data)) != ""; got != c.found {
			t.Errorf("secretIn(%s, %q) found=%v, want %v", c.path, c.data, got, c.found)
		}
	}
}

var (
	privateKeyBlock = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)
	kubeconfigKind  = regexp.MustCompile(`(?m)^kind: Config\s*$`)
	credential      = regexp.MustCompile(`(?m)^\s*(client-key-data|token|password):\s*\S`)
)

// secretIn says what secret data holds, or "".
func secretIn(path string, data []byte) string {
	switch {
	case privateKeyBlock.Match(data):
		return "holds a private key"
	case kubeconfigKind.Match(data) && credential.Match(data) && !bytes.Contains(data, []byte("package ")):
		return "is a kubeconfig with credentials"
	}
	return ""
}
