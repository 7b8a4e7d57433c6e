package main

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Unpacked is what a container runtime takes from one platform's image to
// start its container: the file system and the process' settings.
type Unpacked struct {
	// Root the image's file system was written under.
	Root       string   `json:"root"`
	Entrypoint []string `json:"entrypoint"`
	Cmd        []string `json:"cmd,omitempty"`
	Env        []string `json:"env,omitempty"`
	User       string   `json:"user"`
	WorkingDir string   `json:"workingDir"`
}

// unpackMain writes one platform's file system of the layout's image index
// under -root and prints its process settings as JSON, so a test can run
// the very binary the image ships, as the image says to run it.
func unpackMain(args []string) error {
	fs := flag.NewFlagSet("unpack", flag.ContinueOnError)
	dir := fs.String("layout", "../../../bin/image", "The OCI image layout make image wrote.")
	platform := fs.String("platform", "linux/amd64", "Which platform's image.")
	root := fs.String("root", "", "Directory to write the image's file system under (required).")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" {
		return errors.New("-root is required")
	}
	p, err := v1.ParsePlatform(*platform)
	if err != nil {
		return err
	}
	idx, err := ReadLayout(*dir)
	if err != nil {
		return err
	}
	u, err := Unpack(idx, *p, *root)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(u)
}

// Unpack writes the flattened file system of idx's image for p under root
// (regular files and directories, with their modes; ownership is left to
// the caller, who runs as the image's user) and returns its settings.
func Unpack(idx v1.ImageIndex, p v1.Platform, root string) (*Unpacked, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var img v1.Image
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == p.OS && d.Platform.Architecture == p.Architecture {
			if img, err = idx.Image(d.Digest); err != nil {
				return nil, err
			}
		}
	}
	if img == nil {
		return nil, fmt.Errorf("the image has no %s platform", p.String())
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		name := path.Clean("/" + h.Name)
		if strings.Contains(name, "..") {
			return nil, fmt.Errorf("refusing the layer's path %q", h.Name)
		}
		dst := filepath.Join(root, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, os.FileMode(h.Mode&0o7777)|0o700); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return nil, err
			}
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode&0o7777))
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, err
			}
			if err := os.Chmod(dst, os.FileMode(h.Mode&0o7777)); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s: unpacking a %c entry is not supported (the image holds regular files only)", h.Name, h.Typeflag)
		}
	}
	return &Unpacked{Root: root, Entrypoint: cf.Config.Entrypoint, Cmd: cf.Config.Cmd, Env: cf.Config.Env,
		User: cf.Config.User, WorkingDir: cf.Config.WorkingDir}, nil
}
