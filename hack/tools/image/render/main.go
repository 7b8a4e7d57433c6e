// Command render renders config/default with the manager's image set, as
// `kustomize edit set image` then `kustomize build` would, without touching
// the tree (make deploy IMG=…):
//
//	go run ./render -config ../../../config/default -image registry/trainjob-kueue:tag [-o FILE]
//
// The image is set through a kustomize overlay's `images:` entry naming the
// manager's image as config/default renders it.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/pkg/util"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The Deployment and container whose image is set.
const (
	deploymentName = "trainjob-kueue-controller-manager"
	containerName  = "manager"
)

func main() {
	config := flag.String("config", "../../../config/default", "The kustomization to render.")
	img := flag.String("image", "", "The manager's image: registry/trainjob-kueue:tag or registry/trainjob-kueue@sha256:… (required).")
	out := flag.String("o", "-", "Where to write the rendered objects (- for stdout).")
	flag.Parse()
	data, err := Render(*config, *img)
	if err == nil {
		if *out == "-" {
			_, err = os.Stdout.Write(data)
		} else {
			if err = os.MkdirAll(filepath.Dir(*out), 0o755); err == nil {
				err = os.WriteFile(*out, data, 0o644)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "render: %v\n", err)
		os.Exit(1)
	}
}

// Render renders the kustomization at dir with the manager's image set to
// img, which must name a tag or digest.
func Render(dir, img string) ([]byte, error) {
	newName, newTag, digest := util.SplitImageName(img)
	if img == "" {
		return nil, errors.New("no image: set IMG=registry/trainjob-kueue:tag")
	}
	if newTag == "" && digest == "" {
		return nil, fmt.Errorf("IMG=%s names no tag or digest (there is no implicit latest): registry/trainjob-kueue:tag", img)
	}
	// The kustomization's tree (its parent, for config/default's ../manager
	// and others) copied into memory, with an overlay beside it.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	mem := filesys.MakeFsInMemory()
	base := "/tree/" + filepath.Base(abs)
	if err := copyTree(mem, filepath.Dir(abs), "/tree"); err != nil {
		return nil, err
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	plain, err := k.Run(mem, base)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	current, err := managerImage(plain.AsYaml)
	if err != nil {
		return nil, err
	}
	oldName, _, _ := util.SplitImageName(current)
	overlay := map[string]any{
		"resources": []string{"../tree/" + filepath.Base(abs)},
		"images":    []map[string]string{{"name": oldName, "newName": newName, "newTag": newTag, "digest": digest}},
	}
	if digest != "" {
		delete(overlay["images"].([]map[string]string)[0], "newTag")
	} else {
		delete(overlay["images"].([]map[string]string)[0], "digest")
	}
	kust, err := yaml.Marshal(overlay)
	if err != nil {
		return nil, err
	}
	if err := mem.WriteFile("/overlay/kustomization.yaml", kust); err != nil {
		return nil, err
	}
	m, err := k.Run(mem, "/overlay")
	if err != nil {
		return nil, fmt.Errorf("kustomize build with the image set: %w", err)
	}
	data, err := m.AsYaml()
	if err != nil {
		return nil, err
	}
	got, err := managerImage(m.AsYaml)
	if err != nil {
		return nil, err
	}
	if got != img {
		return nil, fmt.Errorf("the manager's image rendered as %s, not %s", got, img)
	}
	return data, nil
}

// managerImage is the image of the manager's container in the rendered
// objects.
func managerImage(asYaml func() ([]byte, error)) (string, error) {
	data, err := asYaml()
	if err != nil {
		return "", err
	}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Name  string `json:"name"`
							Image string `json:"image"`
						} `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return "", err
		}
		if obj.Kind != "Deployment" || obj.Metadata.Name != deploymentName {
			continue
		}
		for _, c := range obj.Spec.Template.Spec.Containers {
			if c.Name == containerName {
				return c.Image, nil
			}
		}
	}
	return "", fmt.Errorf("no Deployment %s with a container %s rendered", deploymentName, containerName)
}

// copyTree copies the directories and regular files under dir into mem at
// to.
func copyTree(mem filesys.FileSystem, dir, to string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		target := path.Join(to, filepath.ToSlash(rel))
		if d.IsDir() {
			return mem.MkdirAll(target)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		data, err := io.ReadAll(f)
		if err != nil {
			return err
		}
		return mem.WriteFile(target, data)
	})
}
