package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// validate runs krew's own manifest validation (krew-index's
// validate-krew-manifest, its install step aside: that downloads).
func validate(t *testing.T, manifest []byte) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), plugin+".yaml")
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "run", "sigs.k8s.io/krew/cmd/validate-krew-manifest", "-skip-install", "-manifest", path).CombinedOutput()
	if err != nil {
		return &validationError{string(out)}
	}
	return nil
}

type validationError struct{ out string }

func (e *validationError) Error() string { return e.out }

// The manifest of a release passes krew's validation: every platform its
// archive, sha256 and binary; a version krew can't read is refused.
func TestTheManifestPassesKrewsValidation(t *testing.T) {
	dir := t.TempDir()
	var done []archived
	for _, p := range platforms {
		bin := filepath.Join(dir, p.os+p.arch)
		if err := os.WriteFile(bin, []byte("plugin for "+p.os+"/"+p.arch), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := archive(p, bin, filepath.Join(dir, "no-license"), dir); err == nil {
			t.Fatal("archived without a LICENSE: krew-index refuses such an archive")
		}
		a, err := archive(p, bin, filepath.Join("..", "..", "..", "LICENSE"), dir)
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, a)
	}
	good, err := yaml.Marshal(manifest("v0.1.0", "https://example.com/releases/download/", done))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, good); err != nil {
		t.Fatalf("krew refuses the manifest:\n%s\n%s", err, good)
	}
	for _, want := range []string{"uri: https://example.com/releases/download/v0.1.0/kubectl-trainjob_kueue_linux_amd64.tar.gz", "bin: kubectl-trainjob_kueue.exe", "os: darwin"} {
		if !strings.Contains(string(good), want) {
			t.Errorf("the manifest does not say %q:\n%s", want, good)
		}
	}
	bad, err := yaml.Marshal(manifest("0.1", "https://example.com", done))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, bad); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("a version krew can't parse passed validation (%v)", err)
	}
}

// An archive holds the plugin's binary under the manifest's bin name, and
// its sha256 is the file's.
func TestAnArchiveHoldsTheBinaryTheManifestNames(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "built")
	if err := os.WriteFile(bin, []byte("the plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	lic := filepath.Join(dir, "LICENSE")
	if err := os.WriteFile(lic, []byte("license text"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := archive(platform{"windows", "amd64"}, bin, lic, dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, a.file))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != a.sha256 {
		t.Errorf("sha256 %s, the file's is %x", a.sha256, sum)
	}
	gz, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != "kubectl-trainjob_kueue.exe,LICENSE" {
		t.Errorf("archive holds %v", names)
	}
	again, err := archive(platform{"windows", "amd64"}, bin, lic, t.TempDir())
	if err != nil || again.sha256 != a.sha256 {
		t.Errorf("the same binary archived twice differs: %s, %s (%v)", a.sha256, again.sha256, err)
	}
}

// A release needs a version krew can read.
func TestReleaseRefusesAVersionWithoutV(t *testing.T) {
	if err := release(".", "0.1.0", "x", t.TempDir(), "https://example.com"); err == nil || !strings.Contains(err.Error(), "leading v") {
		t.Errorf("release with version 0.1.0: %v", err)
	}
}
