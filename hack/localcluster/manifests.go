package localcluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// ModuleDir is where the Go module cache holds module at the version the Go
// module in dir requires ("" for the current one); the control plane
// installs each component's real CRDs and webhook manifests from there.
func ModuleDir(dir, module string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating module %s: %w", module, err)
	}
	d := strings.TrimSpace(string(out))
	if d == "" {
		// Required but not downloaded yet.
		dl := exec.Command("go", "mod", "download", module)
		dl.Dir = dir
		if err := dl.Run(); err != nil {
			return "", fmt.Errorf("downloading module %s: %w", module, err)
		}
		return ModuleDir(dir, module)
	}
	return d, nil
}

// ReadDocs splits a multi-document YAML file.
func ReadDocs(file string) ([][]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		d, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(bytes.TrimSpace(d)) > 0 {
			docs = append(docs, d)
		}
	}
}

// ReadCRDs reads the CustomResourceDefinitions in files, skipping anything
// else (a kustomization, say).
func ReadCRDs(files ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		docs, err := ReadDocs(f)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(d, crd); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if crd.Kind == "CustomResourceDefinition" {
				crds = append(crds, crd)
			}
		}
	}
	return crds, nil
}

// WebhookConfigs reads a component's webhook manifests and points every
// webhook whose service path keep accepts at a loopback server; the
// configurations are renamed with prefix so components that kept
// kubebuilder's default names don't collide.
func WebhookConfigs(file, prefix, url string, caBundle []byte, keep func(path string) bool) ([]client.Object, error) {
	docs, err := ReadDocs(file)
	if err != nil {
		return nil, err
	}
	rename := func(name string) string { return prefix + "-" + strings.TrimPrefix(name, prefix+"-") }
	var objs []client.Object
	for _, d := range docs {
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(d, &meta); err != nil {
			return nil, err
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			c := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := yaml.Unmarshal(d, c); err != nil {
				return nil, err
			}
			c.Name = rename(c.Name)
			c.Webhooks = slices.DeleteFunc(c.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return !keep(servicePath(w.ClientConfig)) })
			for i := range c.Webhooks {
				c.Webhooks[i].ClientConfig = loopback(c.Webhooks[i].ClientConfig, url, caBundle)
			}
			objs = append(objs, c)
		case "ValidatingWebhookConfiguration":
			c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := yaml.Unmarshal(d, c); err != nil {
				return nil, err
			}
			c.Name = rename(c.Name)
			c.Webhooks = slices.DeleteFunc(c.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool { return !keep(servicePath(w.ClientConfig)) })
			for i := range c.Webhooks {
				c.Webhooks[i].ClientConfig = loopback(c.Webhooks[i].ClientConfig, url, caBundle)
			}
			objs = append(objs, c)
		}
	}
	return objs, nil
}

// All keeps every webhook of a manifest.
func All(string) bool { return true }

func servicePath(cc admissionregistrationv1.WebhookClientConfig) string {
	if cc.Service != nil && cc.Service.Path != nil {
		return *cc.Service.Path
	}
	return ""
}

func loopback(cc admissionregistrationv1.WebhookClientConfig, url string, caBundle []byte) admissionregistrationv1.WebhookClientConfig {
	u := url + servicePath(cc)
	return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caBundle}
}
