package restartwatch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	builtInOn  = "integrations:\n  frameworks: [\"batch/job\", \"trainer.kubeflow.org/trainjob\"]\n"
	builtInOff = "integrations:\n  frameworks: [\"batch/job\"]\n"
)

func TestBuiltInChangedSaysWhichWayTheIntegrationTurned(t *testing.T) {
	for _, tc := range []struct {
		name        string
		body        string
		withBuiltIn bool
		want        string
	}{
		{"still on", builtInOn, true, ""},
		{"still off", builtInOff, false, ""},
		{"turned off", builtInOff, true, "turns its built-in \"trainer.kubeflow.org/trainjob\" integration off: restarting to take TrainJobs over"},
		{"turned on", builtInOn, false, "turns its built-in \"trainer.kubeflow.org/trainjob\" integration on: restarting to stand by"},
		{"an edit in progress", "integrations: [", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := BuiltInChanged(writeConfig(t, tc.body), tc.withBuiltIn)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want no change", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestTheBuiltInWatchStopsTheManagerOnceTheFileChanges(t *testing.T) {
	path := writeConfig(t, builtInOn)
	stopped := make(chan error, 1)
	w := &builtInWatch{path: path, withBuiltIn: true, every: 10 * time.Millisecond, stop: func(err error) { stopped <- err }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Start(ctx) }()
	select {
	case err := <-stopped:
		t.Fatalf("stopped before any change: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := os.WriteFile(filepath.Clean(path), []byte(builtInOff), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stopped:
		if !strings.Contains(err.Error(), "take TrainJobs over") {
			t.Errorf("stopped with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not notice the integration turned off")
	}
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
}

// writeConfig writes a Kueue Configuration with body and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
