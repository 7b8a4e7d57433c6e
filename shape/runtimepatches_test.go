package shape_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

var rp = shape.RuntimePatches{}

func patchFor(manager, job string, podTemplate string) trainjob.RuntimePatch {
	return trainjob.RuntimePatch{Manager: manager, TrainingRuntimeSpec: &runtime.RawExtension{Raw: []byte(
		`{"template":{"spec":{"replicatedJobs":[{"name":"` + job + `","template":{"spec":{"template":` + podTemplate + `}}}]}}}`)}}
}

func jobWithPatches(p ...trainjob.RuntimePatch) *trainjob.TrainJob {
	return &trainjob.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Name: "j", ResourceVersion: "3"},
		Spec:       trainjob.Spec{RuntimeRef: trainer.RuntimeRef{Name: "torch"}, RuntimePatches: p},
	}
}

func applyTo(t testing.TB, j *trainjob.TrainJob, ops []shape.Op) *trainjob.TrainJob {
	t.Helper()
	doc, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, applyRaw(t, doc, ops))
}

func TestRuntimePatchesInjectsOneEntryUnderOurManager(t *testing.T) {
	user := patchFor("platform-team", "node", `{"spec":{"nodeSelector":{"disk":"ssd"}}}`)
	inTree := patchFor(names.InTreeRuntimePatchManager, "node", `{"spec":{"nodeSelector":{"flavor":"old"}}}`)
	j := jobWithPatches(user, inTree)
	got := applyTo(t, j, rp.Inject(j, admission()))
	if n := len(got.Spec.RuntimePatches); n != 3 {
		t.Fatalf("want the user's patch, the in-tree one emptied and ours, got %d", n)
	}
	if got.Spec.RuntimePatches[0].Manager != "platform-team" || got.Spec.RuntimePatches[1].Manager != names.InTreeRuntimePatchManager || got.Spec.RuntimePatches[2].Manager != names.RuntimePatchManager {
		t.Fatalf("managers %q, %q, %q", got.Spec.RuntimePatches[0].Manager, got.Spec.RuntimePatches[1].Manager, got.Spec.RuntimePatches[2].Manager)
	}
	if raw := string(got.Spec.RuntimePatches[1].TrainingRuntimeSpec.Raw); raw != `{"template":{"spec":{}}}` {
		t.Errorf("the in-tree patch after our admission is %s, want it empty (kept for a switch back)", raw)
	}
	// What Trainer will merge into the node job's pod template.
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"base": "x"}}}
	if err := rp.ApplyUserOverrides(got, "node", &tmpl); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"base": "x", "disk": "ssd"}, tmpl.Spec.NodeSelector); diff != "" {
		t.Errorf("user patches applied (ours and in-tree's skipped) (-want +got):\n%s", diff)
	}
	var body map[string]any
	if err := json.Unmarshal(got.Spec.RuntimePatches[2].TrainingRuntimeSpec.Raw, &body); err != nil {
		t.Fatal(err)
	}
	node := body["template"].(map[string]any)["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)
	pod := node["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)
	if node["name"] != "node" || pod["spec"].(map[string]any)["nodeSelector"].(map[string]any)["pool"] != "a100" {
		t.Errorf("our patch %s", got.Spec.RuntimePatches[2].TrainingRuntimeSpec.Raw)
	}
	if labels := pod["metadata"].(map[string]any)["labels"].(map[string]any); labels[names.OwnedLabel] != "true" {
		t.Errorf("pods of our patch should carry %s: %v", names.OwnedLabel, labels)
	}
	if ops := rp.Inject(got, admission()); ops != nil {
		t.Errorf("same admission again: %v", ops)
	}
	restored := applyTo(t, got, rp.Restore(got))
	emptyInTree := trainjob.RuntimePatch{Manager: names.InTreeRuntimePatchManager, TrainingRuntimeSpec: &runtime.RawExtension{Raw: []byte(`{"template":{"spec":{}}}`)}}
	if diff := cmp.Diff([]trainjob.RuntimePatch{user, emptyInTree}, restored.Spec.RuntimePatches, cmp.Comparer(func(a, b runtime.RawExtension) bool { return string(a.Raw) == string(b.Raw) })); diff != "" {
		t.Errorf("restored (-want +got):\n%s", diff)
	}
}

func TestRuntimePatchesTampered(t *testing.T) {
	j := jobWithPatches(patchFor("platform-team", "node", `{}`))
	ours := applyTo(t, j, rp.Inject(j, admission()))
	if p := rp.Tampered(nil, ours); len(p) != 1 {
		t.Errorf("a new job with our manager's patch: %v", p)
	}
	if p := rp.Tampered(ours, ours); len(p) != 0 {
		t.Errorf("unchanged: %v", p)
	}
	if p := rp.Tampered(ours, j); len(p) != 1 {
		t.Errorf("our patch removed by someone else: %v", p)
	}
	edited := ours.DeepCopy()
	edited.Spec.RuntimePatches[1] = patchFor(names.RuntimePatchManager, "node", `{"spec":{"nodeSelector":{"pool":"mine"}}}`)
	if p := rp.Tampered(ours, edited); len(p) != 1 {
		t.Errorf("our patch changed by someone else: %v", p)
	}
}

func TestRuntimePatchesFull(t *testing.T) {
	users := func(n int) []trainjob.RuntimePatch {
		var out []trainjob.RuntimePatch
		for i := range n {
			out = append(out, patchFor("team.example/p"+string(rune('a'+i)), "node", `{}`))
		}
		return out
	}
	ours := patchFor(names.RuntimePatchManager, "node", `{"spec":{"nodeSelector":{"pool":"gpu"}}}`)
	inTree := patchFor(names.InTreeRuntimePatchManager, "node", `{"spec":{"nodeSelector":{"pool":"gpu"}}}`)
	emptyInTree := trainjob.RuntimePatch{Manager: names.InTreeRuntimePatchManager, TrainingRuntimeSpec: &runtime.RawExtension{Raw: []byte(`{"template":{"spec":{}}}`)}}
	cases := map[string]struct {
		patches []trainjob.RuntimePatch
		full    bool
	}{
		"none":                                 {},
		"15 of the user's leave room for ours": {patches: users(15)},
		"15 of the user's and ours (admitted)": {patches: append(users(15), ours)},
		"16 of the user's":                     {patches: users(16), full: true},
		"16 of the user's and the in-tree one": {patches: append(users(16), inTree), full: true},
		// Kept, emptied, at our admission, for a switch back.
		"the in-tree entry takes a place":         {patches: append(users(15), inTree), full: true},
		"14 of the user's and the in-tree one":    {patches: append(users(14), inTree)},
		"14 of the user's and the in-tree marker": {patches: append(users(14), emptyInTree)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			msg := rp.Full(jobWithPatches(tc.patches...))
			if (msg != "") != tc.full {
				t.Fatalf("Full = %q, want full %v", msg, tc.full)
			}
			if tc.full {
				for _, want := range []string{"16", "at most 1"} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q does not say %q", msg, want)
					}
				}
			}
			// Whatever Full allows, our injection keeps within Trainer's limit.
			if !tc.full {
				got := applyTo(t, jobWithPatches(tc.patches...), rp.Inject(jobWithPatches(tc.patches...), []shape.Injection{{Name: "node", NodeSelector: map[string]string{"pool": "gpu"}}}))
				if n := len(got.Spec.RuntimePatches); n > shape.MaxRuntimePatches {
					t.Errorf("after injection %d runtime patches, Trainer takes %d", n, shape.MaxRuntimePatches)
				}
			}
		})
	}
}

func TestInTreeMarked(t *testing.T) {
	// Kueue's in-tree webhook adds an empty one at create: nothing to lose.
	emptyInTree := trainjob.RuntimePatch{Manager: names.InTreeRuntimePatchManager, TrainingRuntimeSpec: &runtime.RawExtension{Raw: []byte(`{"template":{"spec":{}}}`)}}
	job := jobWithPatches(patchFor("team.example/a", "node", `{}`), patchFor(names.InTreeRuntimePatchManager, "node", `{"spec":{"nodeSelector":{"disk":"ssd"}}}`), patchFor(names.RuntimePatchManager, "node", `{}`), emptyInTree)
	if diff := cmp.Diff([]string{"spec.runtimePatches[1].manager"}, rp.InTreeMarked(job)); diff != "" {
		t.Errorf("runtimePatches (-want +got):\n%s", diff)
	}
	v21 := &trainjob.TrainJob{Spec: trainjob.Spec{PodTemplateOverrides: []trainjob.PodTemplateOverride{
		{},
		{Metadata: &metav1.ObjectMeta{Labels: map[string]string{"team": "a"}}},
		{Metadata: &metav1.ObjectMeta{Labels: map[string]string{names.InTreePodSetLabel: "node"}}},
	}}}
	if diff := cmp.Diff([]string{"spec.podTemplateOverrides[2].metadata.labels[kueue.x-k8s.io/podset]"}, (shape.PodTemplateOverrides{}).InTreeMarked(v21)); diff != "" {
		t.Errorf("podTemplateOverrides (-want +got):\n%s", diff)
	}
}
