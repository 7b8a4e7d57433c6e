package localcluster

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSetIntegrationTurnsTheBuiltInTrainJobIntegrationOnAndOffAlone(t *testing.T) {
	cfg := kueueConfig{
		"integrations": map[string]any{"frameworks": []any{"batch/job", "jobset.x-k8s.io/jobset"}},
		"multiKueue": map[string]any{"externalFrameworks": []any{
			map[string]any{"name": inTreeMultiKueue}, map[string]any{"name": "Other.v1.example.com"},
		}},
	}
	cfg.setIntegration(IntegrationInTree)
	if diff := cmp.Diff([]any{"batch/job", "jobset.x-k8s.io/jobset", inTreeFramework}, cfg.frameworks()); diff != "" {
		t.Errorf("intree frameworks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{map[string]any{"name": "Other.v1.example.com"}}, cfg.object("multiKueue")["externalFrameworks"]); diff != "" {
		t.Errorf("intree keeps a generic MultiKueue adapter for TrainJob (-want +got):\n%s", diff)
	}
	if got := cfg.integration(); got != IntegrationInTree {
		t.Errorf("integration() = %q after setting intree", got)
	}
	cfg.setIntegration(IntegrationInTree)
	if n := len(cfg.frameworks()); n != 3 {
		t.Errorf("setting intree twice lists %d frameworks, want 3", n)
	}
	cfg.setIntegration(IntegrationOurs)
	if diff := cmp.Diff([]any{"batch/job", "jobset.x-k8s.io/jobset"}, cfg.frameworks()); diff != "" {
		t.Errorf("ours frameworks (-want +got):\n%s", diff)
	}
	if got := cfg.integration(); got != IntegrationOurs {
		t.Errorf("integration() = %q after setting ours", got)
	}
	// A MultiKueue manager dispatches ours through Kueue's generic adapter.
	want := []any{map[string]any{"name": "Other.v1.example.com"}, map[string]any{"name": inTreeMultiKueue}}
	if diff := cmp.Diff(want, cfg.object("multiKueue")["externalFrameworks"]); diff != "" {
		t.Errorf("ours: the generic MultiKueue adapter for TrainJob (-want +got):\n%s", diff)
	}
	cfg.setIntegration(IntegrationOurs)
	if diff := cmp.Diff(want, cfg.object("multiKueue")["externalFrameworks"]); diff != "" {
		t.Errorf("setting ours twice (-want +got):\n%s", diff)
	}
}

func TestAManagersKueueWatchesOnlyKindsItsWorkersHave(t *testing.T) {
	cfg := kueueConfig{"integrations": map[string]any{"frameworks": []any{"batch/job", "pod", "jobset.x-k8s.io/jobset", "kubeflow.org/mpijob", inTreeFramework}}}
	cfg.forMultiKueueManager()
	if diff := cmp.Diff([]any{"batch/job", "jobset.x-k8s.io/jobset", inTreeFramework}, cfg.frameworks()); diff != "" {
		t.Errorf("frameworks (-want +got):\n%s", diff)
	}
	mk := cfg.object("multiKueue")
	if mk["workerLostTimeout"] != "30s" || mk["gcInterval"] != "20s" {
		t.Errorf("multiKueue = %v, want the playground's short timeouts", mk)
	}
}

func TestFeatureGatesAreSetOverTheConfigurations(t *testing.T) {
	cfg := kueueConfig{"featureGates": map[string]any{"A": true, "B": true}}
	if err := cfg.setFeatureGates("B=false, C=true"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"A": true, "B": false, "C": true}, cfg.object("featureGates")); diff != "" {
		t.Errorf("featureGates (-want +got):\n%s", diff)
	}
	if err := cfg.setFeatureGates("B"); err == nil {
		t.Error("a gate without a value was taken")
	}
}

func TestAWrittenConfigurationReadsBackTheSame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kueue.yaml")
	cfg := kueueConfig{"namespace": "kueue-system", "integrations": map[string]any{"frameworks": []any{"batch/job"}}}
	if err := cfg.write(path); err != nil {
		t.Fatal(err)
	}
	got, err := readKueueConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

// A DRA cluster's Kueue counts the fake driver's devices as
// example.com/gpu; DRA needs a Kueue that counts devices.
func TestDRAIsCountedByKueueFromV018(t *testing.T) {
	cfg := kueueConfig{}
	cfg.forDRA()
	got := cfg.object("resources")["deviceClassMappings"]
	want := []any{map[string]any{"name": "example.com/gpu", "deviceClassNames": []any{"gpu.example.com"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deviceClassMappings (-want +got):\n%s", diff)
	}
	for v, ok := range map[string]bool{"v0.16.2": false, "v0.17.1": false, "v0.18.0": true, "v0.19.2": true, "main": false} {
		if got := draSupported(v); got != ok {
			t.Errorf("draSupported(%s) = %v, want %v", v, got, ok)
		}
	}
}
