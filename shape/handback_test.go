package shape_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

var rawEqual = cmp.Comparer(func(a, b runtime.RawExtension) bool { return string(a.Raw) == string(b.Raw) })

func emptyInTreePatch() trainjob.RuntimePatch {
	return trainjob.RuntimePatch{Manager: names.InTreeRuntimePatchManager, TrainingRuntimeSpec: &runtime.RawExtension{Raw: []byte(`{"template":{"spec":{}}}`)}}
}

// A job handed back to Kueue's built-in integration keeps the user's
// patches and that integration's (it may be filling it this moment), loses
// ours, and gains the empty patch that integration needs to start it.
func TestRuntimePatchesHandBack(t *testing.T) {
	user := patchFor("platform-team", "node", `{"spec":{"nodeSelector":{"disk":"ssd"}}}`)
	ours := patchFor(names.RuntimePatchManager, "node", `{"spec":{"nodeSelector":{"pool":"a"}}}`)
	filled := patchFor(names.InTreeRuntimePatchManager, "node", `{"spec":{"nodeSelector":{"pool":"b"}}}`)
	many := func(n int) []trainjob.RuntimePatch {
		var out []trainjob.RuntimePatch
		for i := range n {
			out = append(out, patchFor("team.example/p"+string(rune('a'+i)), "node", `{}`))
		}
		return out
	}
	for name, tc := range map[string]struct {
		patches []trainjob.RuntimePatch
		want    []trainjob.RuntimePatch
	}{
		"nothing":                           {want: []trainjob.RuntimePatch{emptyInTreePatch()}},
		"ours alone":                        {patches: []trainjob.RuntimePatch{ours}, want: []trainjob.RuntimePatch{emptyInTreePatch()}},
		"the user's and ours":               {patches: []trainjob.RuntimePatch{user, ours}, want: []trainjob.RuntimePatch{user, emptyInTreePatch()}},
		"the marker and ours":               {patches: []trainjob.RuntimePatch{emptyInTreePatch(), ours}, want: []trainjob.RuntimePatch{emptyInTreePatch()}},
		"Kueue's filled patch is Kueue's":   {patches: []trainjob.RuntimePatch{user, filled}, want: []trainjob.RuntimePatch{user, filled}},
		"no room for the marker":            {patches: many(16), want: many(16)},
		"ours gone, its place the marker's": {patches: append(many(15), ours), want: append(many(15), emptyInTreePatch())},
		"the last room is for the marker":   {patches: many(15), want: append(many(15), emptyInTreePatch())},
	} {
		t.Run(name, func(t *testing.T) {
			j := jobWithPatches(tc.patches...)
			got := applyTo(t, j, rp.HandBack(j)).Spec.RuntimePatches
			if diff := cmp.Diff(tc.want, got, rawEqual); diff != "" {
				t.Errorf("handed back (-want +got):\n%s", diff)
			}
			again := jobWithPatches(got...)
			if ops := rp.HandBack(again); ops != nil {
				t.Errorf("handed back twice: %v", ops)
			}
		})
	}
}

func TestRuntimePatchesMarkForBuiltInLikeKueuesWebhook(t *testing.T) {
	user := patchFor("platform-team", "node", `{}`)
	j := jobWithPatches(user)
	rp.MarkForBuiltIn(j)
	if diff := cmp.Diff([]trainjob.RuntimePatch{user, emptyInTreePatch()}, j.Spec.RuntimePatches, rawEqual); diff != "" {
		t.Errorf("marked (-want +got):\n%s", diff)
	}
	rp.MarkForBuiltIn(j)
	if n := len(j.Spec.RuntimePatches); n != 2 {
		t.Errorf("marked twice: %d patches", n)
	}
	// The marker passes our own check of users' in-tree entries, and
	// Kueue's (or our) admission leaves it in place.
	if got := rp.InTreeMarked(j); got != nil {
		t.Errorf("the marker is refused as a user's in-tree entry: %v", got)
	}
	admitted := applyTo(t, j, rp.Inject(j, admission()))
	stopped := applyTo(t, admitted, rp.Restore(admitted))
	if diff := cmp.Diff(j.Spec.RuntimePatches, stopped.Spec.RuntimePatches, rawEqual); diff != "" {
		t.Errorf("admitted and stopped (-want +got):\n%s", diff)
	}
}

// Trainer v2.1's in-tree integration (Kueue v0.16) replaces its own
// entries at each start and needs no marker: only ours go.
func TestPodTemplateOverridesHandBackRemovesOursAlone(t *testing.T) {
	s := shape.PodTemplateOverrides{}
	user := trainjob.PodTemplateOverride{TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}}}
	inTree := trainjob.PodTemplateOverride{TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}},
		Metadata: &metav1.ObjectMeta{Labels: map[string]string{names.InTreePodSetLabel: "node"}}}
	j := &trainjob.TrainJob{}
	j.Spec.PodTemplateOverrides = []trainjob.PodTemplateOverride{user}
	admitted := applyTo(t, j, s.Inject(j, admission()))
	admitted.Spec.PodTemplateOverrides = append(admitted.Spec.PodTemplateOverrides, inTree)
	got := applyTo(t, admitted, s.HandBack(admitted)).Spec.PodTemplateOverrides
	if diff := cmp.Diff([]trainjob.PodTemplateOverride{user, inTree}, got); diff != "" {
		t.Errorf("handed back (-want +got):\n%s", diff)
	}
	before := j.DeepCopy()
	s.MarkForBuiltIn(j)
	if diff := cmp.Diff(before, j); diff != "" {
		t.Errorf("v2.1 needs no marker (-before +after):\n%s", diff)
	}
}

// The label Kueue v0.16's webhook copied into spec.labels goes, and only
// that label; a job without it gets no operation.
func TestDropCopiedQueueLabel(t *testing.T) {
	copied := &trainjob.TrainJob{}
	copied.Spec.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "lq", "team": "a"}
	if diff := cmp.Diff([]shape.Op{{Op: "remove", Path: trainjob.QueueLabelCopiedPath}}, shape.DropCopiedQueueLabel(copied)); diff != "" {
		t.Errorf("copied label (-want +got):\n%s", diff)
	}
	plain := &trainjob.TrainJob{}
	plain.Spec.Labels = map[string]string{"team": "a"}
	if got := shape.DropCopiedQueueLabel(plain); got != nil {
		t.Errorf("no copied label: %v, want no operation", got)
	}
}
