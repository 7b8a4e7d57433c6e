package main

import (
	"bytes"
	"strings"
	"testing"
)

const config = "../../../../config/default"

func TestRenderSetsTheManagersImageOnly(t *testing.T) {
	plain, err := Render(config, "registry.example.com/x:v0")
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range []string{
		"registry.example.com:5000/team/trainjob-kueue:v1.2.3",
		"registry.example.com/trainjob-kueue@sha256:" + strings.Repeat("ab", 32),
	} {
		data, err := Render(config, img)
		if err != nil {
			t.Fatalf("%s: %v", img, err)
		}
		got, err := managerImage(func() ([]byte, error) { return data, nil })
		if err != nil || got != img {
			t.Errorf("rendered the manager's image as %q (%v), want %q", got, err, img)
		}
		// Nothing else changes.
		if a, b := bytes.ReplaceAll(plain, []byte("registry.example.com/x:v0"), nil), bytes.ReplaceAll(data, []byte(img), nil); !bytes.Equal(a, b) {
			t.Errorf("%s: more than the image changed", img)
		}
	}
}

func TestRenderWantsATagOrDigest(t *testing.T) {
	for _, img := range []string{"", "registry.example.com/trainjob-kueue", "localhost:5000/trainjob-kueue"} {
		if _, err := Render(config, img); err == nil {
			t.Errorf("IMG=%q rendered", img)
		} else {
			t.Logf("IMG=%q: %v", img, err)
		}
	}
}
