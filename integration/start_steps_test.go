package integration

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

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
	cases := map[string]struct {
		step      startStep
		job       *trainjob.TrainJob
		wantOps   int // operations; -1 for "some"
		injected  bool
		wantMoved bool
	}{
		"inject, spec as computed":      {step: injectStep, job: job(gen, true, false), wantOps: -1, injected: true},
		"inject, spec moved":            {step: injectStep, job: job(gen+1, true, false), wantMoved: true},
		"unsuspend, entries ours":       {step: unsuspendStep, job: job(gen, true, true), wantOps: 1},
		"unsuspend, spec moved":         {step: unsuspendStep, job: job(gen+1, true, true), wantMoved: true},
		"unsuspend, entries not ours":   {step: unsuspendStep, job: job(gen, true, false), wantMoved: true},
		"unsuspend, started already":    {step: unsuspendStep, job: job(gen+1, false, true)},
		"one request, spec as computed": {step: oneRequestStep, job: job(gen, true, false), wantOps: -1, injected: true},
		"one request, spec moved":       {step: oneRequestStep, job: job(gen+1, true, false), wantMoved: true},
		"one request, started already":  {step: oneRequestStep, job: job(gen+1, false, true)},
		"one request, entries ours":     {step: oneRequestStep, job: job(gen, true, true), wantOps: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ops, injected, moved := tc.step(tc.job, s, want, gen)
			if moved != tc.wantMoved || injected != tc.injected {
				t.Errorf("moved %v injected %v, want %v %v", moved, injected, tc.wantMoved, tc.injected)
			}
			switch {
			case tc.wantOps == -1 && len(ops) == 0, tc.wantOps >= 0 && len(ops) != tc.wantOps:
				t.Errorf("ops %v, want %d", ops, tc.wantOps)
			}
			if unsuspends := len(ops) > 0 && ops[len(ops)-1] == unsuspend; unsuspends == strings.HasPrefix(name, "inject") && len(ops) > 0 {
				t.Errorf("ops %v: unsuspend %v", ops, unsuspends)
			}
		})
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

// A job Kueue v0.16's built-in integration queued carries the queue label
// in spec.labels: its start removes it with the entries, so Trainer's
// JobSet is not queued a second time by Kueue's JobSet integration; the
// unsuspend waits until it is gone.
func TestTheStartDropsTheQueueLabelKueueCopied(t *testing.T) {
	s := shape.PodTemplateOverrides{}
	want := []shape.Injection{{Name: "node", NodeSelector: map[string]string{"pool": "gpu"}}}
	j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "j", Generation: 1}}
	j.Spec.Suspend = ptr.To(true)
	j.Spec.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "lq"}
	if _, _, moved := unsuspendStep(j, s, want, 1); !moved {
		t.Error("the unsuspend went ahead with the copied label on the job")
	}
	ops, injected, moved := injectStep(j, s, want, 1)
	if !injected || moved {
		t.Fatalf("injected %v moved %v", injected, moved)
	}
	got := applyOps(t, j, ops)
	if got.QueueLabelCopied() || len(got.Spec.PodTemplateOverrides) == 0 {
		t.Errorf("after the inject: spec.labels %v, %d entries", got.Spec.Labels, len(got.Spec.PodTemplateOverrides))
	}
	one, _, _ := oneRequestStep(j, s, want, 1)
	if got := applyOps(t, j, one); got.QueueLabelCopied() || ptr.Deref(got.Spec.Suspend, true) {
		t.Errorf("the one-request start left spec.labels %v, suspend %v", got.Spec.Labels, got.Spec.Suspend)
	}
}

// On Trainer v2.0 (no pod metadata in podSpecOverrides) a start that would
// drop what the admission gives the pods is refused, naming it: the
// topology gate, or an admission check's annotations and labels (a
// ProvisioningRequest's). A plain admission starts, with the labels and
// annotations Kueue gives every admission (its podset label, its workload
// annotation), which only serve those two.
func TestAStartTrainerV20CantCarryIsRefused(t *testing.T) {
	caps := shape.Capabilities{Field: "spec.podSpecOverrides"}
	kueues := podset.PodSetInfo{Name: "node", NodeSelector: map[string]string{"pool": "a100"},
		Labels: map[string]string{"kueue.x-k8s.io/podset": "node"}, Annotations: map[string]string{"kueue.x-k8s.io/workload": "trainjob-j-1"}}
	provisioned := kueue.AdmissionCheckState{Name: "gpu-capacity", PodSetUpdates: []kueue.PodSetUpdate{{Name: "node", Annotations: map[string]string{
		"autoscaling.x-k8s.io/consume-provisioning-request": "pr-1", "autoscaling.x-k8s.io/provisioning-class-name": "check-capacity.autoscaling.x-k8s.io"}}}}
	cases := map[string]struct {
		info       podset.PodSetInfo
		checks     []kueue.AdmissionCheckState
		wantReason string
		wantSaid   []string
	}{
		"a flavor's placement, Kueue's own labels": {info: kueues},
		"a check with no pod updates":              {info: kueues, checks: []kueue.AdmissionCheckState{{Name: "plain", PodSetUpdates: []kueue.PodSetUpdate{{Name: "node", NodeSelector: map[string]string{"zone": "a"}}}}}},
		"a topology": {info: podset.PodSetInfo{Name: "node", SchedulingGates: []corev1.PodSchedulingGate{{Name: kueue.TopologySchedulingGate}}},
			wantReason: ReasonTopologyUnsupported, wantSaid: []string{`role "node"`, "topology-aware scheduling", "v2.1+"}},
		"a ProvisioningRequest to consume": {info: kueues, checks: []kueue.AdmissionCheckState{provisioned},
			wantReason: ReasonPodMetadataUnsupported, wantSaid: []string{`role "node"`, "gpu-capacity", "autoscaling.x-k8s.io/consume-provisioning-request, autoscaling.x-k8s.io/provisioning-class-name", "spec.podSpecOverrides", "v2.1+"}},
		"an admission check's label": {info: kueues, checks: []kueue.AdmissionCheckState{{Name: "zoner", PodSetUpdates: []kueue.PodSetUpdate{{Name: "launcher", Labels: map[string]string{"example.com/zone": "a"}}}}},
			wantReason: ReasonPodMetadataUnsupported, wantSaid: []string{`role "launcher"`, "example.com/zone"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := metadataUnsupported(caps, []podset.PodSetInfo{{Name: "dataset-initializer"}, tc.info}, tc.checks)
			if got.reason != tc.wantReason {
				t.Fatalf("reason %q (%s), want %q", got.reason, got.msg, tc.wantReason)
			}
			for _, w := range tc.wantSaid {
				if !strings.Contains(got.msg, w) {
					t.Errorf("message %q does not say %q", got.msg, w)
				}
			}
		})
	}
}
