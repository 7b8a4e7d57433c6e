package main

import (
	"archive/tar"
	"context"
	"debug/elf"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	testVersion = "v0.0.0-imagetest"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
)

// testPlatforms are the platforms TestImage builds: make image's two
// (linux/amd64, linux/arm64), or those IMAGE_TEST_PLATFORMS lists
// (comma-separated): make test builds the host's alone, each platform
// being a whole cold build of the manager (make test-full builds both).
func testPlatforms(t *testing.T) []v1.Platform {
	list := os.Getenv("IMAGE_TEST_PLATFORMS")
	if list == "" {
		list = "linux/amd64,linux/arm64"
	}
	var out []v1.Platform
	for _, s := range strings.Split(list, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("IMAGE_TEST_PLATFORMS %q: %v", list, err)
		}
		out = append(out, *p)
	}
	return out
}

// The image make image builds: both architectures (testPlatforms), non-root, the binary
// where the entrypoint says, stamped with the version and commit given, and
// runnable (the host's architecture's binary, run with --version).
func TestImage(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	b := Build{
		Root:      root,
		Version:   testVersion,
		Commit:    testCommit,
		Created:   time.Unix(1700000000, 0).UTC(),
		Platforms: testPlatforms(t),
		Log:       testWriter{t},
	}
	tmp := t.TempDir()
	bins, err := b.Binaries(context.Background(), tmp)
	if err != nil {
		t.Fatal(err)
	}
	built, err := b.Index(bins)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "layout")
	if err := WriteLayout(dir, built, b.Version); err != nil {
		t.Fatal(err)
	}
	// Everything below reads the image back from the layout.
	idx, err := ReadLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := idx.MediaType(); mt != types.OCIImageIndex {
		t.Errorf("index media type %s", mt)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range im.Manifests {
		if d.Platform == nil {
			t.Fatalf("manifest %s has no platform", d.Digest)
		}
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(d.Platform.String(), func(t *testing.T) {
			checkImage(t, img, *d.Platform, tmp)
		})
	}
	var want []string
	for _, p := range b.Platforms {
		want = append(want, p.String())
	}
	if !slices.Equal(platforms, want) {
		t.Errorf("index platforms %v, want %v", platforms, want)
	}

	// Reproducible: the same binaries and inputs give the same digest.
	again, err := b.Index(bins)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("the same build assembled twice: %s, then %s", d1, d2)
	}

	t.Run("docker tarball", func(t *testing.T) {
		path := filepath.Join(tmp, "image.tar")
		if err := WriteDockerTarball(path, idx, b.Platforms[len(b.Platforms)-1], "trainjob-kueue", testVersion); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tr := tar.NewReader(f)
		var names []string
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, h.Name)
		}
		if !slices.Contains(names, "manifest.json") {
			t.Errorf("docker tarball holds %v, no manifest.json", names)
		}
	})

	t.Run("push", func(t *testing.T) {
		srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		defer srv.Close()
		host := strings.TrimPrefix(srv.URL, "http://")
		if _, err := Push(context.Background(), dir, host+"/trainjob-kueue"); err == nil {
			t.Error("pushed without a tag")
		}
		ref := host + "/trainjob-kueue:" + testVersion
		pushed, err := Push(context.Background(), dir, ref)
		if err != nil {
			t.Fatal(err)
		}
		tag, _ := name.NewTag(ref)
		got, err := remote.Index(tag)
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := got.Digest(); d != d1 || pushed != d1 {
			t.Errorf("pushed %s, registry serves %s, built %s", pushed, d, d1)
		}
	})
}

func checkImage(t *testing.T, img v1.Image, p v1.Platform, tmp string) {
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != p.OS || cf.Architecture != p.Architecture {
		t.Errorf("config says %s/%s", cf.OS, cf.Architecture)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", cf.Config.User)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/manager"}) {
		t.Errorf("entrypoint %q", cf.Config.Entrypoint)
	}
	if cf.Config.WorkingDir != "/" {
		t.Errorf("working dir %q", cf.Config.WorkingDir)
	}
	if !cf.Created.Time.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("created %s", cf.Created.Time)
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.version":  testVersion,
		"org.opencontainers.image.revision": testCommit,
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.title":    "trainjob-kueue",
		"org.opencontainers.image.licenses": "Apache-2.0",
	} {
		if got := cf.Config.Labels[k]; got != v {
			t.Errorf("label %s=%q, want %q", k, got, v)
		}
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	if mt, _ := layers[0].MediaType(); mt != types.OCILayer {
		t.Errorf("layer media type %s", mt)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	found := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != "manager" {
			t.Errorf("unexpected file %s in the layer", h.Name)
			continue
		}
		found = true
		if h.Typeflag != tar.TypeReg || h.Mode&0o7777 != 0o755 || h.Uid != 65532 || h.Gid != 65532 {
			t.Errorf("/manager: type %c mode %o uid %d gid %d, want a 0755 file owned by 65532:65532", h.Typeflag, h.Mode, h.Uid, h.Gid)
		}
		bin := filepath.Join(tmp, "extracted-manager-"+p.Architecture)
		f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		f.Close()
		checkELF(t, bin, p)
		if p.Architecture != runtime.GOARCH {
			continue
		}
		out, err := exec.Command(bin, "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("/manager --version: %v\n%s", err, out)
		}
		if want := "trainjob-kueue " + testVersion + " (commit " + testCommit + ")"; strings.TrimSpace(string(out)) != want {
			t.Errorf("/manager --version printed %q, want %q", out, want)
		}
	}
	if !found {
		t.Error("no /manager in the layer")
	}
}

// checkELF: the binary is a static Linux executable of the platform's
// architecture (no interpreter to find in an empty image).
func checkELF(t *testing.T, path string, p v1.Platform) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("/manager is no ELF executable: %v", err)
	}
	defer f.Close()
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[p.Architecture]
	if f.Machine != want || f.Type != elf.ET_EXEC {
		t.Errorf("/manager is a %s %s, want an executable for %s", f.Machine, f.Type, want)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
			t.Errorf("/manager is dynamically linked (%s)", prog.Type)
		}
	}
}

// The Dockerfile builds the same binary with the same script, onto
// distroless' static:nonroot, as the same user with the same entrypoint.
func TestDockerfileBuildsWhatMakeImageBuilds(t *testing.T) {
	data, err := os.ReadFile("../../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^FROM --platform=\$BUILDPLATFORM golang:\S+ AS builder$`),
		regexp.MustCompile(`GOOS=\$\{TARGETOS\} GOARCH=\$\{TARGETARCH\} VERSION=\$\{VERSION\} COMMIT=\$\{COMMIT\} \\\s+hack/build-manager.sh /out/manager`),
		regexp.MustCompile(`(?m)^FROM gcr.io/distroless/static:nonroot$`),
		regexp.MustCompile(`(?m)^COPY --from=builder --chown=65532:65532 /out/manager /manager$`),
		regexp.MustCompile(`(?m)^USER 65532:65532$`),
		regexp.MustCompile(`(?m)^ENTRYPOINT \["/manager"\]$`),
		regexp.MustCompile(`org.opencontainers.image.version="\$\{VERSION\}"`),
		regexp.MustCompile(`org.opencontainers.image.revision="\$\{COMMIT\}"`),
	} {
		if !want.MatchString(df) {
			t.Errorf("Dockerfile does not match %s", want)
		}
	}
	// The builder's Go is go.mod's.
	mod, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(mod))
	if goLine == nil || !strings.Contains(df, "ARG GO_VERSION="+goLine[1]+"\n") {
		t.Errorf("Dockerfile's GO_VERSION is not go.mod's Go %v", goLine)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// The Docker build context keeps every package the manager is built from.
func TestDockerignoreKeepsTheManagersSources(t *testing.T) {
	data, err := os.ReadFile("../../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.TrimSuffix(l, "/"))
		}
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./cmd/trainjob-kueue")
	cmd.Dir = "../../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, _ := filepath.Abs("../../..")
	needed := []string{"go.mod", "go.sum", "hack/build-manager.sh"}
	for _, dir := range strings.Fields(string(out)) {
		if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
			needed = append(needed, filepath.ToSlash(rel))
		}
	}
	if len(needed) < 4 {
		t.Fatalf("go list found no package of the module: %s", out)
	}
	for _, n := range needed {
		for _, p := range patterns {
			if n == p || strings.HasPrefix(n, p+"/") {
				t.Errorf(".dockerignore's %s leaves %s out of the build context", p, n)
			}
		}
	}
}
