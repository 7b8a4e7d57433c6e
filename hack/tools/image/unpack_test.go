package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Unpack writes the chosen platform's /manager with its mode and returns
// how the image runs it; a platform the index lacks is refused.
func TestUnpackWritesThePlatformsFileSystemAndSettings(t *testing.T) {
	tmp := t.TempDir()
	amd64, arm64 := filepath.Join(tmp, "amd64"), filepath.Join(tmp, "arm64")
	if err := os.WriteFile(amd64, []byte("amd64 binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(arm64, []byte("arm64 binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := Build{Version: testVersion, Commit: testCommit, Created: time.Unix(1700000000, 0).UTC(),
		Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}}
	idx, err := b.Index(map[string]string{"linux/amd64": amd64, "linux/arm64": arm64})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(tmp, "root")
	got, err := Unpack(idx, v1.Platform{OS: "linux", Architecture: "arm64"}, root)
	if err != nil {
		t.Fatal(err)
	}
	want := &Unpacked{Root: root, Entrypoint: []string{"/manager"}, User: "65532:65532", WorkingDir: "/"}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("settings %+v, want %+v", got, want)
	}
	data, err := os.ReadFile(filepath.Join(root, "manager"))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "arm64 binary" {
		t.Errorf("/manager holds %q, want the arm64 binary", data)
	}
	if fi, err := os.Stat(filepath.Join(root, "manager")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("/manager: %v, mode %v, want 0755", err, fi.Mode())
	}
	if _, err := Unpack(idx, v1.Platform{OS: "linux", Architecture: "s390x"}, filepath.Join(tmp, "none")); err == nil {
		t.Error("unpacked a platform the image lacks")
	}
}
