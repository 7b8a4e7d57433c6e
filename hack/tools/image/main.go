// Command image builds the manager's container image without a Docker
// engine and pushes it (make image, make image-push):
//
//	go run . build -root ../../.. -out ../../../bin/image
//	go run . push -layout ../../../bin/image -image registry/trainjob-kueue:tag
//	go run . unpack -layout ../../../bin/image -platform linux/amd64 -root DIR
//
// build runs hack/build-manager.sh (the Dockerfile's build) for each
// platform and assembles the binaries onto an empty base as a multi-arch
// OCI image index, written as an OCI image layout; push sends that index to
// a registry with the Docker config's credentials; unpack writes one
// platform's file system to a directory and prints how the image runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|push|unpack [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "build":
		err = buildMain(ctx, os.Args[2:])
	case "push":
		err = pushMain(ctx, os.Args[2:])
	case "unpack":
		err = unpackMain(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: build, push or unpack", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "image %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func buildMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	root := fs.String("root", "../../..", "The repository's root.")
	out := fs.String("out", "", "Directory of the OCI image layout to write (default ROOT/bin/image).")
	version := fs.String("version", "", "Version stamped into the binary and labels (default: git describe --tags --always --dirty).")
	commit := fs.String("commit", "", "Commit stamped into the binary and labels (default: git rev-parse HEAD).")
	epoch := fs.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "The image's creation time in Unix seconds (default: $SOURCE_DATE_EPOCH, else the commit's time).")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "Platforms of the multi-arch image.")
	dockerTar := fs.String("docker-tarball", "", "Also write the image for this host's architecture as a `docker load` tarball here.")
	repo := fs.String("repository", "trainjob-kueue", "Repository the docker tarball's image is tagged with (the tag is the version).")
	if err := fs.Parse(args); err != nil {
		return err
	}
	absRoot, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	b := Build{Root: absRoot, Version: *version, Commit: *commit, Log: os.Stderr}
	if b.Version == "" {
		b.Version = gitOr(absRoot, "dev", "describe", "--tags", "--always", "--dirty")
	}
	if b.Commit == "" {
		b.Commit = gitOr(absRoot, "unknown", "rev-parse", "HEAD")
	}
	if b.Created, err = createdTime(absRoot, *epoch); err != nil {
		return err
	}
	if b.Platforms, err = parsePlatforms(*platforms); err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join(absRoot, "bin", "image")
	}
	tmp, err := os.MkdirTemp("", "trainjob-kueue-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bins, err := b.Binaries(ctx, tmp)
	if err != nil {
		return err
	}
	idx, err := b.Index(bins)
	if err != nil {
		return err
	}
	if err := WriteLayout(*out, idx, b.Version); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("image %s (version %s, commit %s, %s) written as an OCI layout to %s\n", digest, b.Version, b.Commit, platformList(b.Platforms), *out)
	if *dockerTar != "" {
		host := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
		if err := WriteDockerTarball(*dockerTar, idx, host, *repo, b.Version); err != nil {
			return err
		}
		fmt.Printf("%s:%s for %s written to %s (docker load -i %s)\n", *repo, b.Version, host.String(), *dockerTar, *dockerTar)
	}
	return nil
}

func pushMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	dir := fs.String("layout", "../../../bin/image", "The OCI image layout make image wrote.")
	ref := fs.String("image", "", "Where to push: registry/repository:tag (required; no implicit latest).")
	check := fs.Bool("check", false, "Only check the reference, before a long build.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := ParseTag(*ref); err != nil || *check {
		return err
	}
	digest, err := Push(ctx, *dir, *ref)
	if err != nil {
		return err
	}
	fmt.Printf("pushed %s@%s\n", *ref, digest)
	return nil
}

func platformList(ps []v1.Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
