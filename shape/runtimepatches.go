package shape

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

const patchesPath = "/spec/runtimePatches"

// RuntimePatches is spec.runtimePatches of Trainer v2.2 and later: a list of
// strategic merge patches of the runtime's spec, one per manager, applied in
// order. We inject one entry with our manager key.
type RuntimePatches struct {
	// Release tells apart what the CRD alone does not.
	Release podsets.Rules
	// UnsuspendsInOnePatch: the webhook accepts a patch that changes the
	// runtime patches and unsuspends at once (Trainer v2.2.1+).
	UnsuspendsInOnePatch bool
}

var _ Shape = RuntimePatches{}

func (RuntimePatches) Name() string { return "spec.runtimePatches" }

// Rules implements podsets.Shape.
func (s RuntimePatches) Rules() podsets.Rules { return s.Release }

// replicatedJobPatch is the part of a runtime patch for one replicatedJob's
// pod template.
type replicatedJobPatch struct {
	Name     string `json:"name"`
	Template struct {
		Spec struct {
			Template json.RawMessage `json:"template,omitempty"`
		} `json:"spec"`
	} `json:"template"`
}

type runtimeSpecPatch struct {
	Template struct {
		Spec struct {
			ReplicatedJobs []replicatedJobPatch `json:"replicatedJobs,omitempty"`
		} `json:"spec"`
	} `json:"template"`
}

// ApplyUserOverrides applies the pod template parts of the users' runtime
// patches. Trainer merges each patch into the runtime's JobSet spec, where
// replicatedJobs merge by name; per job that is a strategic merge of the pod
// template.
func (RuntimePatches) ApplyUserOverrides(job *trainjob.TrainJob, jobName string, tmpl *corev1.PodTemplateSpec) error {
	for i := range job.Spec.RuntimePatches {
		p := &job.Spec.RuntimePatches[i]
		if injectedPatch(p) || p.TrainingRuntimeSpec == nil {
			continue
		}
		var spec runtimeSpecPatch
		if err := json.Unmarshal(p.TrainingRuntimeSpec.Raw, &spec); err != nil {
			return fmt.Errorf("spec.runtimePatches[%d] (manager %q): %w", i, p.Manager, err)
		}
		for _, rj := range spec.Template.Spec.ReplicatedJobs {
			if rj.Name != jobName || len(rj.Template.Spec.Template) == 0 {
				continue
			}
			patch := map[string]any{}
			if err := json.Unmarshal(rj.Template.Spec.Template, &patch); err != nil {
				return fmt.Errorf("spec.runtimePatches[%d] (manager %q): %w", i, p.Manager, err)
			}
			if err := mergeInto(tmpl, patch); err != nil {
				return fmt.Errorf("spec.runtimePatches[%d] (manager %q): %w", i, p.Manager, err)
			}
		}
	}
	return nil
}

func (RuntimePatches) Injected(job *trainjob.TrainJob) bool {
	return slices.ContainsFunc(job.Spec.RuntimePatches, func(p trainjob.RuntimePatch) bool { return injectedPatch(&p) })
}

// Inject renders our runtime patch for want. It is the last entry, so
// Trainer applies it after every user patch.
func (s RuntimePatches) Inject(job *trainjob.TrainJob, want []Injection) []Op {
	entry := renderPatch(want)
	list := job.Spec.RuntimePatches
	foreign := slices.ContainsFunc(list, func(p trainjob.RuntimePatch) bool {
		return p.Manager == names.InTreeRuntimePatchManager && injectedPatch(&p)
	})
	if n := len(list); !foreign && n > 0 && list[n-1].Manager == names.RuntimePatchManager && samePatch(&list[n-1], &entry) &&
		slices.IndexFunc(list, func(p trainjob.RuntimePatch) bool { return p.Manager == names.RuntimePatchManager }) == n-1 {
		return nil
	}
	ops := s.Restore(job)
	if len(list) == 0 || len(ops) > 0 && ops[len(ops)-1].Op == "remove" && ops[len(ops)-1].Path == patchesPath {
		return append(ops, Op{Op: "add", Path: patchesPath, Value: []trainjob.RuntimePatch{entry}})
	}
	return append(ops, Op{Op: "add", Path: patchesPath + "/-", Value: entry})
}

// Restore removes our runtime patch and empties Kueue's in-tree one (a
// switch from that integration leaves it filled on the jobs it started):
// the empty entry is what that integration needs to start and stop the job
// again after a switch back, and it patches nothing.
func (RuntimePatches) Restore(job *trainjob.TrainJob) []Op {
	list := job.Spec.RuntimePatches
	var ops []Op
	var ours []int
	for i := range list {
		switch p := &list[i]; {
		case p.Manager == names.RuntimePatchManager:
			ours = append(ours, i)
		case injectedPatch(p):
			ops = append(ops, Op{Op: "replace", Path: fmt.Sprintf("%s/%d", patchesPath, i), Value: emptyInTreePatch()})
		}
	}
	return append(ops, removeAll(patchesPath, ours, len(list))...)
}

// HandBack removes our runtime patch alone, and adds Kueue's empty one
// where missing.
func (RuntimePatches) HandBack(job *trainjob.TrainJob) []Op {
	list := job.Spec.RuntimePatches
	var ours []int
	for i := range list {
		if list[i].Manager == names.RuntimePatchManager {
			ours = append(ours, i)
		}
	}
	ops := removeAll(patchesPath, ours, len(list))
	// Ours gone, the marker needs one place of Trainer's MaxRuntimePatches
	// beside the user's: no admission of ours adds an entry any more.
	if hasInTreePatch(list) || len(list)-len(ours) >= MaxRuntimePatches {
		return ops
	}
	if len(ops) == 1 && ops[0].Path == patchesPath || len(list) == 0 {
		return append(ops, Op{Op: "add", Path: patchesPath, Value: []trainjob.RuntimePatch{emptyInTreePatch()}})
	}
	return append(ops, Op{Op: "add", Path: patchesPath + "/-", Value: emptyInTreePatch()})
}

// MarkForBuiltIn adds Kueue's empty runtime patch, as its own webhook does
// at create, where there is room for it beside the user's and ours.
func (RuntimePatches) MarkForBuiltIn(job *trainjob.TrainJob) {
	list := job.Spec.RuntimePatches
	if hasInTreePatch(list) || len(list) >= MaxRuntimePatches-1 {
		return
	}
	job.Spec.RuntimePatches = append(list, emptyInTreePatch())
}

func hasInTreePatch(list []trainjob.RuntimePatch) bool {
	return slices.ContainsFunc(list, func(p trainjob.RuntimePatch) bool { return p.Manager == names.InTreeRuntimePatchManager })
}

// emptyInTreePatch is the entry Kueue v0.17+'s webhook adds at create for
// its reconciler to fill at admission.
func emptyInTreePatch() trainjob.RuntimePatch {
	return trainjob.RuntimePatch{Manager: names.InTreeRuntimePatchManager, TrainingRuntimeSpec: &runtime.RawExtension{Raw: []byte(`{"template":{"spec":{}}}`)}}
}

func (RuntimePatches) Tampered(old, job *trainjob.TrainJob) []string {
	var before *trainjob.RuntimePatch
	if old != nil {
		for i := range old.Spec.RuntimePatches {
			if old.Spec.RuntimePatches[i].Manager == names.RuntimePatchManager {
				before = &old.Spec.RuntimePatches[i]
			}
		}
	}
	var paths []string
	found := false
	for i := range job.Spec.RuntimePatches {
		p := &job.Spec.RuntimePatches[i]
		if p.Manager != names.RuntimePatchManager {
			continue
		}
		found = true
		if before == nil || !samePatch(before, p) {
			paths = append(paths, fmt.Sprintf("spec.runtimePatches[%d]", i))
		}
	}
	if before != nil && !found {
		paths = append(paths, fmt.Sprintf("spec.runtimePatches[manager=%s] (removed)", names.RuntimePatchManager))
	}
	return paths
}

func (RuntimePatches) Marker() (string, string) {
	return "runtime patches with manager " + names.RuntimePatchManager, "give your own patch a manager name of your own"
}

// InTreeMarked skips the empty patch Kueue's in-tree webhook adds at
// create for its reconciler to fill: it holds nothing to lose.
func (RuntimePatches) InTreeMarked(job *trainjob.TrainJob) []string {
	var paths []string
	for i := range job.Spec.RuntimePatches {
		p := &job.Spec.RuntimePatches[i]
		if p.Manager == names.InTreeRuntimePatchManager && !emptyPatch(p) {
			paths = append(paths, fmt.Sprintf("spec.runtimePatches[%d].manager", i))
		}
	}
	return paths
}

// emptyPatch: the patch sets nothing (objects all the way down, if any).
func emptyPatch(p *trainjob.RuntimePatch) bool {
	if p.TrainingRuntimeSpec == nil || len(p.TrainingRuntimeSpec.Raw) == 0 {
		return true
	}
	var v any
	if err := json.Unmarshal(p.TrainingRuntimeSpec.Raw, &v); err != nil {
		return false
	}
	var empty func(any) bool
	empty = func(v any) bool {
		switch v := v.(type) {
		case nil:
			return true
		case map[string]any:
			for _, e := range v {
				if !empty(e) {
					return false
				}
			}
			return true
		}
		return false
	}
	return empty(v)
}

// MaxRuntimePatches is Trainer's limit on spec.runtimePatches (the CRD's
// maxItems, v2.2 and v2.3).
const MaxRuntimePatches = 16

func (RuntimePatches) Full(job *trainjob.TrainJob) string {
	users, kueue := 0, 0
	for i := range job.Spec.RuntimePatches {
		switch job.Spec.RuntimePatches[i].Manager {
		case names.RuntimePatchManager:
		case names.InTreeRuntimePatchManager:
			// Kept, emptied, at our admission (Restore).
			kueue++
		default:
			users++
		}
	}
	if users+kueue < MaxRuntimePatches {
		return ""
	}
	return fmt.Sprintf("the job has %d runtime patches of its own%s and Trainer takes at most %d, so the one trainjob-kueue adds at admission (to place the pods on their flavor) would be refused and the job could never start: merge patches until at most %d are left",
		users, map[bool]string{true: " besides Kueue's (" + names.InTreeRuntimePatchManager + ")"}[kueue > 0], MaxRuntimePatches, MaxRuntimePatches-1-kueue)
}

// injectedPatch: our patch, or Kueue in-tree's holding what an admission
// of that integration wrote. Its empty entry is no admission's: it stays
// (Restore) and counts against Trainer's limit as the user's do (Full).
func injectedPatch(p *trainjob.RuntimePatch) bool {
	return p.Manager == names.RuntimePatchManager || p.Manager == names.InTreeRuntimePatchManager && !emptyPatch(p)
}

// renderPatch is our runtime patch for an admission.
func renderPatch(want []Injection) trainjob.RuntimePatch {
	type podSpec struct {
		NodeSelector    map[string]string          `json:"nodeSelector,omitempty"`
		Tolerations     []corev1.Toleration        `json:"tolerations,omitempty"`
		SchedulingGates []corev1.PodSchedulingGate `json:"schedulingGates,omitempty"`
	}
	type podTemplate struct {
		Metadata *metav1.ObjectMeta `json:"metadata,omitempty"`
		Spec     *podSpec           `json:"spec,omitempty"`
	}
	type job struct {
		Name     string `json:"name"`
		Template struct {
			Spec struct {
				Template podTemplate `json:"template"`
			} `json:"spec"`
		} `json:"template"`
	}
	var jobs []job
	for i := range want {
		o := render(&want[i]) // the pod template entry of v2.1, reused
		var j job
		j.Name = want[i].Name
		j.Template.Spec.Template.Metadata = o.Metadata
		if o.Spec != nil {
			j.Template.Spec.Template.Spec = &podSpec{NodeSelector: o.Spec.NodeSelector, Tolerations: o.Spec.Tolerations, SchedulingGates: o.Spec.SchedulingGates}
		}
		jobs = append(jobs, j)
	}
	body := map[string]any{"template": map[string]any{"spec": map[string]any{"replicatedJobs": jobs}}}
	raw, err := json.Marshal(body)
	if err != nil {
		// Only maps, strings and core types: cannot fail.
		panic(err)
	}
	return trainjob.RuntimePatch{Manager: names.RuntimePatchManager, TrainingRuntimeSpec: &runtime.RawExtension{Raw: raw}}
}

// samePatch compares two patches by meaning, not by byte layout: the API
// server may order keys differently from us.
func samePatch(a, b *trainjob.RuntimePatch) bool {
	if a.Manager != b.Manager || (a.TrainingRuntimeSpec == nil) != (b.TrainingRuntimeSpec == nil) {
		return false
	}
	if a.TrainingRuntimeSpec == nil {
		return true
	}
	var x, y any
	if json.Unmarshal(a.TrainingRuntimeSpec.Raw, &x) != nil || json.Unmarshal(b.TrainingRuntimeSpec.Raw, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
