// Command krew writes the kubectl plugin's krew release: one archive per
// platform (the plugin built with cgo off and -trimpath, its version
// stamped) and the krew manifest trainjob-kueue.yaml naming each archive's
// URI and sha256, as krew-index takes it.
//
//	go run . -root ../../.. -version v0.1.0 -out ../../../bin/krew
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/krew/pkg/index"
	"sigs.k8s.io/yaml"
)

// plugin is the plugin's name in krew (kubectl trainjob-kueue) and its
// binary's.
const (
	plugin = "trainjob-kueue"
	binary = "kubectl-trainjob_kueue"
)

// platform is one build of the plugin.
type platform struct{ os, arch string }

var platforms = []platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}}

// archived is one platform's archive.
type archived struct {
	platform
	file   string
	sha256 string
}

func main() {
	root := flag.String("root", ".", "the repository")
	version := flag.String("version", "", "the release, as krew wants it: semver with a v, e.g. v0.1.0")
	commit := flag.String("commit", "unknown", "the commit stamped into the plugin")
	out := flag.String("out", "bin/krew", "where the archives and the manifest go")
	base := flag.String("download-url", "https://github.com/trainjob-kueue/trainjob-kueue/releases/download", "where the release's archives are downloaded from; the version and the archive's name follow")
	flag.Parse()
	if err := release(*root, *version, *commit, *out, *base); err != nil {
		fmt.Fprintln(os.Stderr, "krew:", err)
		os.Exit(1)
	}
}

func release(root, version, commit, out, base string) error {
	if !strings.HasPrefix(version, "v") {
		return fmt.Errorf("-version %q: krew wants a semantic version with a leading v, e.g. v0.1.0", version)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var done []archived
	for _, p := range platforms {
		bin, err := build(root, p, version, commit, out)
		if err != nil {
			return err
		}
		a, err := archive(p, bin, filepath.Join(root, "LICENSE"), out)
		if err != nil {
			return err
		}
		done = append(done, a)
	}
	data, err := yaml.Marshal(manifest(version, base, done))
	if err != nil {
		return err
	}
	path := filepath.Join(out, plugin+".yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	fmt.Println("wrote", path)
	return nil
}

// build builds the plugin for p.
func build(root string, p platform, version, commit, out string) (string, error) {
	bin := filepath.Join(out, p.os+"-"+p.arch, binary+exe(p))
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin,
		"-ldflags", fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s", version, commit), "./cmd/kubectl-trainjob_kueue")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.os, "GOARCH="+p.arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the plugin for %s/%s: %w", p.os, p.arch, err)
	}
	return bin, nil
}

func exe(p platform) string {
	if p.os == "windows" {
		return ".exe"
	}
	return ""
}

// archive packs bin and license (krew-index asks every archive for one)
// into a tar.gz for p, and returns it with its sha256.
func archive(p platform, bin, license, out string) (archived, error) {
	name := fmt.Sprintf("%s_%s_%s.tar.gz", binary, p.os, p.arch)
	f, err := os.Create(filepath.Join(out, name))
	if err != nil {
		return archived{}, err
	}
	defer f.Close()
	h := sha256.New()
	gz := gzip.NewWriter(io.MultiWriter(f, h))
	tw := tar.NewWriter(gz)
	if _, err := os.Stat(license); err != nil {
		return archived{}, fmt.Errorf("krew-index wants a LICENSE in every archive: %w", err)
	}
	files := map[string]string{binary + exe(p): bin, "LICENSE": license}
	for _, in := range []string{binary + exe(p), "LICENSE"} {
		src, ok := files[in]
		if !ok {
			continue
		}
		if err := add(tw, in, src); err != nil {
			return archived{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return archived{}, err
	}
	if err := gz.Close(); err != nil {
		return archived{}, err
	}
	return archived{platform: p, file: name, sha256: hex.EncodeToString(h.Sum(nil))}, f.Close()
}

func add(tw *tar.Writer, name, src string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	// Fixed owner and time: the same build archives to the same bytes.
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err = tw.Write(data)
	return err
}

// manifest is krew's Plugin for the archives of version.
func manifest(version, base string, done []archived) index.Plugin {
	p := index.Plugin{
		TypeMeta:   metav1.TypeMeta{APIVersion: "krew.googlecontainertools.github.com/v1alpha2", Kind: "Plugin"},
		ObjectMeta: metav1.ObjectMeta{Name: plugin},
		Spec: index.PluginSpec{
			Version:          version,
			Homepage:         "https://github.com/trainjob-kueue/trainjob-kueue",
			ShortDescription: "Explain and list Kubeflow TrainJobs queued by Kueue",
			Description: `Reads, with your kubeconfig's identity, how Kueue queues Kubeflow Trainer
TrainJobs under trainjob-kueue:
  explain   why a TrainJob is (not) admitted, per role, and what it takes
  list      every TrainJob's queue state at a glance
  migrate   what a switch from Kueue's built-in TrainJob integration does
            to each job (--check: changes nothing)
It changes nothing in the cluster.`,
		},
	}
	for _, a := range done {
		p.Spec.Platforms = append(p.Spec.Platforms, index.Platform{
			URI:      fmt.Sprintf("%s/%s/%s", strings.TrimSuffix(base, "/"), version, a.file),
			Sha256:   a.sha256,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"os": a.os, "arch": a.arch}},
			Bin:      binary + exe(a.platform),
		})
	}
	return p
}
