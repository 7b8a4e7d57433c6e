package integration

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// The start's steps write nothing to a job whose spec moved since the
// admission's entries were computed from it (generation 4 here): a user's
// spec.trainer edit landing between our read and our write would otherwise
// start pods the reservation was not made for.
func TestStartStepsWriteNothingToAMovedSpec(t *testing.T) {
	s := shape.RuntimePatches{}
	want := []shape.Injection{{Name: "node", NodeSelector: map[string]string{"pool": "gpu"}}}
	job := func(gen int64, suspended, injected bool) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "j", Generation: gen}}
		j.Spec.Suspend = ptr.To(suspended)
		if injected {
			j.Spec.RuntimePatches = []trainjob.RuntimePatch{}
			doc := applyOps(t, j, s.Inject(j, want))
			j.Spec.RuntimePatches = doc.Spec.RuntimePatches
		}
		return j
	}
	const gen = 4

	if ops, moved := injectOps(job(gen, true, false), s, want, gen); moved || ops == nil {
		t.Errorf("inject, spec as computed: ops %v moved %v, want the entries", ops, moved)
	}
	if ops, moved := injectOps(job(gen+1, true, false), s, want, gen); !moved || ops != nil {
		t.Errorf("inject, spec moved: ops %v moved %v, want nothing written", ops, moved)
	}

	if ops, moved := unsuspendOps(job(gen, true, true), s, want, gen); moved || len(ops) != 1 {
		t.Errorf("unsuspend, entries ours: ops %v moved %v, want spec.suspend=false", ops, moved)
	}
	if ops, moved := unsuspendOps(job(gen+1, true, true), s, want, gen); !moved || ops != nil {
		t.Errorf("unsuspend, spec moved: ops %v moved %v, want nothing written", ops, moved)
	}
	if ops, moved := unsuspendOps(job(gen, true, false), s, want, gen); !moved || ops != nil {
		t.Errorf("unsuspend, entries not ours: ops %v moved %v, want nothing written", ops, moved)
	}
	if ops, moved := unsuspendOps(job(gen+1, false, true), s, want, gen); moved || ops != nil {
		t.Errorf("unsuspend, started already: ops %v moved %v, want it left alone", ops, moved)
	}

	if ops, injected, moved := oneRequestOps(job(gen, true, false), s, want, gen); moved || !injected || len(ops) < 2 {
		t.Errorf("one request, spec as computed: ops %v injected %v moved %v", ops, injected, moved)
	}
	if ops, _, moved := oneRequestOps(job(gen+1, true, false), s, want, gen); !moved || ops != nil {
		t.Errorf("one request, spec moved: ops %v moved %v, want nothing written", ops, moved)
	}
	if ops, _, moved := oneRequestOps(job(gen+1, false, true), s, want, gen); moved || ops != nil {
		t.Errorf("one request, started already: ops %v moved %v, want it left alone", ops, moved)
	}
}

// applyOps applies ops to j as the API server would.
func applyOps(t *testing.T, j *trainjob.TrainJob, ops []shape.Op) *trainjob.TrainJob {
	t.Helper()
	doc, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
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
		t.Fatal(err)
	}
	got := &trainjob.TrainJob{}
	if err := json.Unmarshal(out, got); err != nil {
		t.Fatal(err)
	}
	return got
}
