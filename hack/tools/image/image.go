package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// The non-root user of distroless' static:nonroot, the Dockerfile's base.
	nonRoot = 65532
	// Where the binary lives in the image, and its entrypoint.
	binaryPath = "/manager"
	// What the OCI labels say the image is built from.
	source = "https://github.com/trainjob-kueue/trainjob-kueue"
	title  = "trainjob-kueue"
	// The annotation naming an image in an OCI layout's index.json.
	refNameAnnotation = "org.opencontainers.image.ref.name"
)

// Build describes one image build: the manager built from the clone at Root
// for each platform, onto an empty base.
type Build struct {
	Root      string // the repository's root
	Version   string // main.version and org.opencontainers.image.version
	Commit    string // main.commit and org.opencontainers.image.revision
	Created   time.Time
	Platforms []v1.Platform
	// Extra environment for go build (GOFLAGS, GOMAXPROCS, …), on top of
	// the tool's own.
	Env []string
	Log io.Writer
}

// Binaries builds the manager for every platform into dir with
// hack/build-manager.sh, the Dockerfile's build, and returns their paths by
// platform.
func (b Build) Binaries(ctx context.Context, dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range b.Platforms {
		bin := filepath.Join(dir, fmt.Sprintf("manager-%s-%s", p.OS, p.Architecture))
		cmd := exec.CommandContext(ctx, filepath.Join(b.Root, "hack", "build-manager.sh"), bin)
		cmd.Dir = b.Root
		cmd.Env = append(os.Environ(), b.Env...)
		cmd.Env = append(cmd.Env, "GOOS="+p.OS, "GOARCH="+p.Architecture, "VERSION="+b.Version, "COMMIT="+b.Commit)
		cmd.Stdout, cmd.Stderr = b.Log, b.Log
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("building the manager for %s: %w", p.String(), err)
		}
		fmt.Fprintf(b.Log, ">> built the manager for %s in %s\n", p.String(), time.Since(start).Round(time.Second))
		out[p.String()] = bin
	}
	return out, nil
}

// license is the project's license (LICENSE at the root), as SPDX names it.
const license = "Apache-2.0"

// Labels are the image's OCI labels (and its index's annotations).
func (b Build) Labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    title,
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.version":  b.Version,
		"org.opencontainers.image.revision": b.Commit,
		"org.opencontainers.image.created":  b.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses": license,
	}
}

// Index assembles the multi-arch image index from binaries (as Binaries
// returns them). The same binaries, version, commit and created time give
// the same digests.
func (b Build) Index(binaries map[string]string) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range b.Platforms {
		bin, ok := binaries[p.String()]
		if !ok {
			return nil, fmt.Errorf("no binary for %s", p.String())
		}
		img, err := b.Image(p, bin)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", p.String(), err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}},
		})
	}
	return mutate.Annotations(idx, b.Labels()).(v1.ImageIndex), nil
}

// Image is one platform's image: the binary at /manager (0755, owned by
// 65532:65532) on an empty base, run as 65532:65532.
func (b Build) Image(p v1.Platform, binary string) (v1.Image, error) {
	layer, err := b.layer(binary)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	created := v1.Time{Time: b.Created.UTC()}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   created,
			CreatedBy: "hack/build-manager.sh (CGO_ENABLED=0 go build -trimpath) by hack/tools/image",
			Comment:   binaryPath,
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = created
	user := fmt.Sprintf("%d:%d", nonRoot, nonRoot)
	cf.Config = v1.Config{
		User:       user,
		Entrypoint: []string{binaryPath},
		WorkingDir: "/",
		Labels:     b.Labels(),
	}
	return mutate.ConfigFile(img, cf)
}

// layer is a gzipped tar holding the binary, compressed once here so the
// digest and the written blob need no second compression.
func (b Build) layer(binary string) (v1.Layer, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg,
		Name:     strings.TrimPrefix(binaryPath, "/"),
		Mode:     0o755,
		Uid:      nonRoot,
		Gid:      nonRoot,
		Size:     int64(len(data)),
		ModTime:  b.Created.UTC(),
		Format:   tar.FormatPAX,
	}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	blob := gz.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(blob)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// WriteLayout writes the index as an OCI image layout at dir (replacing
// whatever was there), named by the version in index.json.
func WriteLayout(dir string, idx v1.ImageIndex, ref string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: ref}))
}

// ReadLayout returns the one image index an OCI layout written by
// WriteLayout holds.
func ReadLayout(dir string) (v1.ImageIndex, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("no image at %s (make image first): %w", dir, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return nil, fmt.Errorf("%s holds %d entries, not one image index", dir, len(m.Manifests))
	}
	return top.ImageIndex(m.Manifests[0].Digest)
}

// ParseTag parses an image reference to push to: it must name its tag,
// there is no implicit "latest".
func ParseTag(ref string) (name.Tag, error) {
	if ref == "" {
		return name.Tag{}, fmt.Errorf("no image reference: set IMG=registry/trainjob-kueue:tag")
	}
	if strings.Contains(ref, "@") {
		return name.Tag{}, fmt.Errorf("IMG=%s: push to a tag, not a digest (registry/trainjob-kueue:tag)", ref)
	}
	if i := strings.LastIndex(ref, ":"); i < 0 || i < strings.LastIndex(ref, "/") {
		return name.Tag{}, fmt.Errorf("IMG=%s names no tag (there is no implicit latest): registry/trainjob-kueue:tag", ref)
	}
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("IMG=%s: %w (name the registry, repository and tag: registry/trainjob-kueue:tag)", ref, err)
	}
	return tag, nil
}

// Push pushes the multi-arch index of the layout at dir to ref with the
// credentials of the Docker config (authn.DefaultKeychain), and returns its
// digest.
func Push(ctx context.Context, dir, ref string) (v1.Hash, error) {
	tag, err := ParseTag(ref)
	if err != nil {
		return v1.Hash{}, err
	}
	idx, err := ReadLayout(dir)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return v1.Hash{}, fmt.Errorf("pushing to %s: %w", tag, err)
	}
	return idx.Digest()
}

// WriteDockerTarball writes one platform's image of idx as a tarball
// `docker load` (and podman, kind, k3s) accept, tagged repo:version.
func WriteDockerTarball(path string, idx v1.ImageIndex, p v1.Platform, repo, version string) error {
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range m.Manifests {
		if d.Platform == nil || d.Platform.OS != p.OS || d.Platform.Architecture != p.Architecture {
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		tag, err := name.NewTag(repo + ":" + version)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return tarball.WriteToFile(path, tag, img)
	}
	return fmt.Errorf("no image for %s", p.String())
}

// gitOr returns the output of git args in dir, or fallback without git.
func gitOr(dir, fallback string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if s := strings.TrimSpace(string(out)); err == nil && s != "" {
		return s
	}
	return fallback
}

// createdTime is SOURCE_DATE_EPOCH when set, else the commit's time, else
// the Unix epoch: never the wall clock, so a build is reproducible.
func createdTime(root, sourceDateEpoch string) (time.Time, error) {
	if sourceDateEpoch == "" {
		sourceDateEpoch = gitOr(root, "0", "log", "-1", "--format=%ct")
	}
	secs, err := strconv.ParseInt(sourceDateEpoch, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", sourceDateEpoch, err)
	}
	return time.Unix(secs, 0).UTC(), nil
}

func parsePlatforms(s string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, f := range strings.Split(s, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if p.OS != "linux" {
			return nil, fmt.Errorf("platform %s: only linux images", f)
		}
		out = append(out, *p)
	}
	return out, nil
}
