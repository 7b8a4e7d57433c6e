package shape_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// applyRaw applies ops to a TrainJob's JSON the way the API server would.
func applyRaw(t testing.TB, doc []byte, ops []shape.Op) []byte {
	t.Helper()
	raw, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("applying %s: %v", raw, err)
	}
	return out
}

func decode(t testing.TB, doc []byte) *trainjob.TrainJob {
	t.Helper()
	j := &trainjob.TrainJob{}
	if err := json.Unmarshal(doc, j); err != nil {
		t.Fatal(err)
	}
	return j
}

// FuzzInjectThenRestoreIsIdentity: for random user entries and random
// admissions, injecting then restoring gives back the user's document
// byte for byte (as JSON values), for every shape.
func FuzzInjectThenRestoreIsIdentity(f *testing.F) {
	f.Add(uint8(0), uint8(1), "pool", "a100", "gpu", true)
	f.Add(uint8(3), uint8(2), "zone", "", "", false)
	f.Add(uint8(1), uint8(0), "k", "v", "spot", true)
	f.Fuzz(func(t *testing.T, users, roles uint8, key, value, taint string, gates bool) {
		users, roles = users%5, roles%4
		// Names reach us from API objects, which hold valid UTF-8 only.
		key, value, taint = strings.ToValidUTF8(key, "?"), strings.ToValidUTF8(value, "?"), strings.ToValidUTF8(taint, "?")
		var want []shape.Injection
		for r := range roles {
			inj := shape.Injection{
				Name:         fmt.Sprintf("job-%d", r),
				Labels:       map[string]string{"kueue.x-k8s.io/podset": fmt.Sprintf("job-%d", r)},
				Annotations:  map[string]string{"kueue.x-k8s.io/workload": value},
				NodeSelector: map[string]string{key + "x": value},
			}
			if taint != "" {
				inj.Tolerations = []corev1.Toleration{{Key: taint, Operator: corev1.TolerationOpExists}}
			}
			if gates {
				inj.SchedulingGates = []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/topology"}}
			}
			want = append(want, inj)
		}
		for _, s := range []shape.Shape{shape.PodTemplateOverrides{}, shape.RuntimePatches{}, shape.PodSpecOverrides{}} {
			// The user's document, with a field no Go type of ours knows.
			spec := map[string]any{"runtimeRef": map[string]any{"name": "torch"}, "costCenter": key}
			var overrides, patches, specOverrides []any
			for u := range users {
				entry := map[string]any{
					"targetJobs":         []any{map[string]any{"name": fmt.Sprintf("job-%d", u)}},
					"serviceAccountName": value,
					"nodeSelector":       map[string]any{key: value},
				}
				if u%2 == 1 {
					entry["tolerations"] = []any{map[string]any{"key": "user", "operator": "Exists"}}
					entry["schedulingGates"] = []any{map[string]any{"name": "user-gate"}}
				}
				specOverrides = append(specOverrides, entry)
				overrides = append(overrides, map[string]any{
					"targetJobs": []any{map[string]any{"name": fmt.Sprintf("job-%d", u)}},
					"comment":    value,
					"spec":       map[string]any{"nodeSelector": map[string]any{key: value}},
				})
				patches = append(patches, map[string]any{
					"manager": fmt.Sprintf("user-%d", u),
					"trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{
						"replicatedJobs": []any{map[string]any{"name": fmt.Sprintf("job-%d", u)}}}}},
				})
			}
			if len(overrides) > 0 {
				spec["podTemplateOverrides"] = overrides
				spec["runtimePatches"] = patches
				spec["podSpecOverrides"] = specOverrides
			}
			doc, err := json.Marshal(map[string]any{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
				"metadata": map[string]any{"name": "j", "resourceVersion": "1"}, "spec": spec})
			if err != nil {
				t.Fatal(err)
			}
			injected := applyRaw(t, doc, s.Inject(decode(t, doc), want))
			if len(want) > 0 && !s.Injected(decode(t, injected)) {
				t.Fatalf("%s: nothing injected", s.Name())
			}
			if ops := s.Inject(decode(t, injected), want); ops != nil {
				t.Fatalf("%s: injecting the same admission twice is not a no-op: %v", s.Name(), ops)
			}
			restored := applyRaw(t, injected, s.Restore(decode(t, injected)))
			var a, b any
			_ = json.Unmarshal(doc, &a)
			_ = json.Unmarshal(restored, &b)
			if !equality.Semantic.DeepEqual(a, b) {
				t.Fatalf("%s: restore did not give back the user's document:\nbefore %s\nafter  %s", s.Name(), doc, restored)
			}
		}
	})
}
