package shape

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

const overridesPath = "/spec/podTemplateOverrides"

// PodTemplateOverrides is Trainer v2.1's spec.podTemplateOverrides: a list of
// {targetJobs, metadata, spec} entries, each merged in order into the pod
// template of the jobs it targets with a strategic merge patch.
type PodTemplateOverrides struct{}

var _ Shape = PodTemplateOverrides{}

func (PodTemplateOverrides) Name() string { return "spec.podTemplateOverrides" }

// Rules of Trainer v2.1.
func (PodTemplateOverrides) Rules() podsets.Rules {
	return podsets.Rules{LauncherAsNodeWorkersGetResources: true}
}

// ApplyUserOverrides implements podsets.Shape the way Trainer v2.1's
// runtime core merges overrides.
func (PodTemplateOverrides) ApplyUserOverrides(job *trainjob.TrainJob, jobName string, tmpl *corev1.PodTemplateSpec) error {
	for i := range job.Spec.PodTemplateOverrides {
		o := &job.Spec.PodTemplateOverrides[i]
		if injected(o) || !targets(o, jobName) {
			continue
		}
		patch := map[string]any{}
		if o.Metadata != nil {
			meta := map[string]any{}
			if o.Metadata.Labels != nil {
				meta["labels"] = o.Metadata.Labels
			}
			if o.Metadata.Annotations != nil {
				meta["annotations"] = o.Metadata.Annotations
			}
			if len(meta) > 0 {
				patch["metadata"] = meta
			}
		}
		if o.Spec != nil {
			patch["spec"] = o.Spec
		}
		if err := mergeInto(tmpl, patch); err != nil {
			return fmt.Errorf("spec.podTemplateOverrides[%d]: %w", i, err)
		}
	}
	return nil
}

func mergeInto(tmpl *corev1.PodTemplateSpec, patch map[string]any) error {
	source, err := json.Marshal(tmpl)
	if err != nil {
		return err
	}
	p, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	merged, err := strategicpatch.StrategicMergePatch(source, p, corev1.PodTemplateSpec{})
	if err != nil {
		return err
	}
	out := corev1.PodTemplateSpec{}
	if err := json.Unmarshal(merged, &out); err != nil {
		return err
	}
	*tmpl = out
	return nil
}

func (PodTemplateOverrides) Injected(job *trainjob.TrainJob) bool {
	return slices.ContainsFunc(job.Spec.PodTemplateOverrides, func(o trainjob.PodTemplateOverride) bool { return injected(&o) })
}

func (s PodTemplateOverrides) Inject(job *trainjob.TrainJob, want []Injection) []Op {
	entries := make([]trainjob.PodTemplateOverride, len(want))
	for i := range want {
		entries[i] = render(&want[i])
	}
	var current []trainjob.PodTemplateOverride
	foreign := false
	for i := range job.Spec.PodTemplateOverrides {
		o := &job.Spec.PodTemplateOverrides[i]
		switch {
		case owned(o):
			current = append(current, *o)
		case injected(o):
			foreign = true
		}
	}
	if !foreign && trailing(job.Spec.PodTemplateOverrides, len(current)) && equality.Semantic.DeepEqual(current, entries) {
		return nil
	}
	ops := s.Restore(job)
	if len(job.Spec.PodTemplateOverrides) == 0 || len(ops) > 0 && removesAll(ops) {
		return append(ops, Op{Op: "add", Path: overridesPath, Value: entries})
	}
	for i := range entries {
		ops = append(ops, Op{Op: "add", Path: overridesPath + "/-", Value: entries[i]})
	}
	return ops
}

func (PodTemplateOverrides) Restore(job *trainjob.TrainJob) []Op {
	return removeOverrides(job.Spec.PodTemplateOverrides, injected)
}

// removeOverrides removes the entries of list that which picks.
func removeOverrides(list []trainjob.PodTemplateOverride, which func(*trainjob.PodTemplateOverride) bool) []Op {
	var idx []int
	for i := range list {
		if which(&list[i]) {
			idx = append(idx, i)
		}
	}
	return removeAll(overridesPath, idx, len(list))
}

// HandBack removes our entries alone: Kueue v0.16's in-tree integration
// replaces its own (kueue.x-k8s.io/podset-labelled) entries at every start
// and needs no marker, but would leave ours, with a former admission's
// flavor, to be applied after its own.
func (PodTemplateOverrides) HandBack(job *trainjob.TrainJob) []Op {
	return removeOverrides(job.Spec.PodTemplateOverrides, owned)
}

// MarkForBuiltIn: Kueue v0.16's in-tree integration needs no marker.
func (PodTemplateOverrides) MarkForBuiltIn(*trainjob.TrainJob) {}

func (PodTemplateOverrides) Tampered(old, job *trainjob.TrainJob) []string {
	var before, after []int
	if old != nil {
		for i := range old.Spec.PodTemplateOverrides {
			if owned(&old.Spec.PodTemplateOverrides[i]) {
				before = append(before, i)
			}
		}
	}
	for i := range job.Spec.PodTemplateOverrides {
		if owned(&job.Spec.PodTemplateOverrides[i]) {
			after = append(after, i)
		}
	}
	var paths []string
	for k, i := range after {
		if k >= len(before) || !equality.Semantic.DeepEqual(&old.Spec.PodTemplateOverrides[before[k]], &job.Spec.PodTemplateOverrides[i]) {
			paths = append(paths, fmt.Sprintf("spec.podTemplateOverrides[%d]", i))
		}
	}
	for k := len(after); k < len(before); k++ {
		paths = append(paths, fmt.Sprintf("spec.podTemplateOverrides[%d] (removed)", before[k]))
	}
	return paths
}

// Full: Trainer sets no limit on spec.podTemplateOverrides.
func (PodTemplateOverrides) Full(*trainjob.TrainJob) string { return "" }

func (PodTemplateOverrides) Marker() (string, string) {
	return "entries labelled " + names.OwnedLabel + "=true", "for your own entry, drop the label"
}

func render(in *Injection) trainjob.PodTemplateOverride {
	labels := maps.Clone(in.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[names.OwnedLabel] = "true"
	o := trainjob.PodTemplateOverride{
		TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: in.Name}},
		Metadata: &metav1.ObjectMeta{
			Labels:      labels,
			Annotations: nonEmpty(in.Annotations),
		},
	}
	spec := &trainjob.PodTemplateSpecOverride{
		NodeSelector:    nonEmpty(in.NodeSelector),
		Tolerations:     slices.Clone(in.Tolerations),
		SchedulingGates: slices.Clone(in.SchedulingGates),
	}
	if len(spec.NodeSelector) > 0 || len(spec.Tolerations) > 0 || len(spec.SchedulingGates) > 0 {
		o.Spec = spec
	}
	return o
}

func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

func targets(o *trainjob.PodTemplateOverride, jobName string) bool {
	return slices.ContainsFunc(o.TargetJobs, func(t trainjob.PodTemplateOverrideTargetJob) bool { return t.Name == jobName })
}

// owned: injected by trainjob-kueue.
func owned(o *trainjob.PodTemplateOverride) bool {
	return o.Metadata != nil && o.Metadata.Labels[names.OwnedLabel] == "true"
}

func (PodTemplateOverrides) InTreeMarked(job *trainjob.TrainJob) []string {
	var paths []string
	for i := range job.Spec.PodTemplateOverrides {
		o := &job.Spec.PodTemplateOverrides[i]
		if o.Metadata == nil {
			continue
		}
		if _, inTree := o.Metadata.Labels[names.InTreePodSetLabel]; inTree {
			paths = append(paths, fmt.Sprintf("spec.podTemplateOverrides[%d].metadata.labels[%s]", i, names.InTreePodSetLabel))
		}
	}
	return paths
}

// IsInjected reports whether a v2.1 override entry was injected at
// admission, by us or by Kueue's in-tree integration.
func IsInjected(o *trainjob.PodTemplateOverride) bool { return injected(o) }

func injected(o *trainjob.PodTemplateOverride) bool {
	if owned(o) {
		return true
	}
	if o.Metadata == nil {
		return false
	}
	_, inTree := o.Metadata.Labels[names.InTreePodSetLabel]
	return inTree
}

// trailing reports whether the last n entries of list are exactly the owned
// ones, i.e. ours come after every user entry and are applied last.
func trailing(list []trainjob.PodTemplateOverride, n int) bool {
	for i := len(list) - n; i < len(list); i++ {
		if !owned(&list[i]) {
			return false
		}
	}
	return true
}

func removesAll(ops []Op) bool {
	return len(ops) == 1 && ops[0].Op == "remove" && ops[0].Path == overridesPath
}
