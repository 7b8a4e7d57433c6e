package install

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// imageProblem says what is wrong with an image reference a cluster would
// pull: no tag (the runtime pulls latest) or the tag latest. A digest pins.
func imageProblem(ref string) string {
	if strings.Contains(ref, "@") {
		return ""
	}
	i := strings.LastIndex(ref, ":")
	if i < 0 || i < strings.LastIndex(ref, "/") {
		return "has no tag (latest is pulled)"
	}
	if ref[i+1:] == "latest" {
		return "is tagged latest"
	}
	return ""
}

// images are the image references anywhere in an object (containers,
// initContainers, …).
func images(v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "image" {
				*out = append(*out, s)
			} else {
				images(x, out)
			}
		}
	case []any:
		for _, x := range v {
			images(x, out)
		}
	}
}

// No shipped manifest runs an image tagged latest or untagged: the image is
// the release's, set in one place (config/default's images:, the chart's
// image values).
func TestNoImageIsLatestOrUntagged(t *testing.T) {
	renders := map[string][]*unstructured.Unstructured{
		"kustomize config/default": kustomize(t),
		"helm defaults":            helm(t, nil),
	}
	for what, objs := range renders {
		n := 0
		for _, o := range objs {
			var refs []string
			images(o.Object, &refs)
			for _, ref := range refs {
				n++
				if p := imageProblem(ref); p != "" {
					t.Errorf("%s: %s runs %s, which %s", what, key(o), ref, p)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no image rendered", what)
		}
	}
	// Nor does any file under config/ or charts/ say latest.
	latest := regexp.MustCompile(`(?m)^[^#\n]*(:latest\b|\b(tag|newTag):\s*["']?latest\b)`)
	for _, dir := range []string{"../../config", "../../charts"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			// The chart's files/ link into config/, scanned itself.
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if m := latest.Find(data); m != nil {
				t.Errorf("%s: %q", path, m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The image config/manager names is the one config/default's images: entry
// renders, and its tag is the chart's appVersion: one release, one tag.
func TestOneReleaseTag(t *testing.T) {
	data, err := os.ReadFile("../../config/manager/manager.yaml")
	if err != nil {
		t.Fatal(err)
	}
	raw := decode(t, data)
	rendered := managerOf(t, kustomize(t)).container["image"]
	if got := managerOf(t, raw).container["image"]; got != rendered {
		t.Errorf("config/manager says %v, config/default renders %v", got, rendered)
	}
	if want := ":" + appVersion(t); !strings.HasSuffix(rendered.(string), want) {
		t.Errorf("config/default renders %v, not the chart's appVersion %s", rendered, appVersion(t))
	}
}
