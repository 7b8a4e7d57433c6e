package shape

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

const specOverridesPath = "/spec/podSpecOverrides"

// PodSpecOverrides is Trainer v2.0's spec.podSpecOverrides.
type PodSpecOverrides struct{}

var _ Shape = PodSpecOverrides{}

func (PodSpecOverrides) Name() string { return "spec.podSpecOverrides" }

// Rules of Trainer v2.0: resourcesPerNode replaces the trainer's resources
// and never reaches the MPI workers; the TrainJob has no jobsStatus.
func (PodSpecOverrides) Rules() podsets.Rules { return podsets.Rules{NoJobsStatus: true} }

// record is what we added to one job's entry.
type record struct {
	Job string `json:"job"`
	// Created: the entry is ours entirely.
	Created bool `json:"created,omitempty"`
	// AddedSelector are the nodeSelector keys we added.
	AddedSelector []string `json:"addedNodeSelector,omitempty"`
	// Tolerations the entry had before us; HadTolerations tells an empty
	// list from none.
	Tolerations    []corev1.Toleration `json:"tolerations,omitempty"`
	HadTolerations bool                `json:"hadTolerations,omitempty"`
	ReplacedTols   bool                `json:"replacedTolerations,omitempty"`
	AddedGates     []string            `json:"addedSchedulingGates,omitempty"`
}

func records(job *trainjob.TrainJob) ([]record, bool) {
	raw, ok := job.Annotations[names.InjectedAnnotation]
	if !ok {
		return nil, false
	}
	var rs []record
	if err := json.Unmarshal([]byte(raw), &rs); err != nil {
		// Not ours to interpret; treat as nothing injected.
		return nil, false
	}
	return rs, true
}

// users returns the entries as the user wrote them: what we added undone.
func users(job *trainjob.TrainJob) []trainjob.PodSpecOverride {
	rs, _ := records(job)
	out := make([]trainjob.PodSpecOverride, 0, len(job.Spec.PodSpecOverrides))
	for i := range job.Spec.PodSpecOverrides {
		var o trainjob.PodSpecOverride
		job.Spec.PodSpecOverrides[i].DeepCopyInto(&o)
		r := recordFor(rs, &o)
		if r == nil {
			out = append(out, o)
			continue
		}
		if r.Created {
			continue
		}
		for _, k := range r.AddedSelector {
			delete(o.NodeSelector, k)
		}
		if len(o.NodeSelector) == 0 {
			o.NodeSelector = nil
		}
		if r.ReplacedTols {
			o.Tolerations = r.Tolerations
		}
		o.SchedulingGates = slices.DeleteFunc(o.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return slices.Contains(r.AddedGates, g.Name) })
		if len(o.SchedulingGates) == 0 {
			o.SchedulingGates = nil
		}
		out = append(out, o)
	}
	return out
}

func recordFor(rs []record, o *trainjob.PodSpecOverride) *record {
	for i := range rs {
		if slices.ContainsFunc(o.TargetJobs, func(t trainjob.TargetJob) bool { return t.Name == rs[i].Job }) {
			return &rs[i]
		}
	}
	return nil
}

// ApplyUserOverrides merges the user's entries targeting jobName into the
// pod spec, as Trainer v2.0 does (a strategic merge of the entry).
func (PodSpecOverrides) ApplyUserOverrides(job *trainjob.TrainJob, jobName string, tmpl *corev1.PodTemplateSpec) error {
	for i, o := range users(job) {
		if !slices.ContainsFunc(o.TargetJobs, func(t trainjob.TargetJob) bool { return t.Name == jobName }) {
			continue
		}
		spec := map[string]any{}
		if o.NodeSelector != nil {
			spec["nodeSelector"] = o.NodeSelector
		}
		if o.Tolerations != nil {
			spec["tolerations"] = o.Tolerations
		}
		if o.SchedulingGates != nil {
			spec["schedulingGates"] = o.SchedulingGates
		}
		if err := mergeInto(tmpl, map[string]any{"spec": spec}); err != nil {
			return fmt.Errorf("spec.podSpecOverrides[%d]: %w", i, err)
		}
	}
	return nil
}

func (PodSpecOverrides) Injected(job *trainjob.TrainJob) bool {
	_, ok := records(job)
	return ok
}

// Inject merges want into the user's entries: the admission of a job goes
// into the entry targeting it, or a new entry when none does. An entry
// shared by several jobs can only carry one placement.
func (s PodSpecOverrides) Inject(job *trainjob.TrainJob, want []Injection) []Op {
	if rs, ok := records(job); ok {
		list, plan := s.desired(users(job), want)
		if equality.Semantic.DeepEqual(rs, plan) && equality.Semantic.DeepEqual(job.Spec.PodSpecOverrides, list) {
			return nil
		}
	}
	ops := s.Restore(job)
	base := users(job)
	var rs []record
	n := len(job.Spec.PodSpecOverrides) - len(created(job))
	for _, r := range s.plan(base, want) {
		inj := injectionFor(want, r.Job)
		if r.Created {
			entry := trainjob.PodSpecOverride{
				TargetJobs:      []trainjob.TargetJob{{Name: r.Job}},
				NodeSelector:    nonEmpty(inj.NodeSelector),
				Tolerations:     slices.Clone(inj.Tolerations),
				SchedulingGates: slices.Clone(inj.SchedulingGates),
			}
			if n == 0 && len(base) == 0 && len(rs) == 0 {
				ops = append(ops, Op{Op: "add", Path: specOverridesPath, Value: []trainjob.PodSpecOverride{entry}})
			} else {
				ops = append(ops, Op{Op: "add", Path: specOverridesPath + "/-", Value: entry})
			}
			rs = append(rs, r)
			continue
		}
		i := slices.IndexFunc(base, func(o trainjob.PodSpecOverride) bool {
			return slices.ContainsFunc(o.TargetJobs, func(t trainjob.TargetJob) bool { return t.Name == r.Job })
		})
		entry := fmt.Sprintf("%s/%d", specOverridesPath, i)
		for _, k := range r.AddedSelector {
			if base[i].NodeSelector == nil {
				ops = append(ops, Op{Op: "add", Path: entry + "/nodeSelector", Value: map[string]string{}})
				base[i].NodeSelector = map[string]string{}
			}
			ops = append(ops, Op{Op: "add", Path: entry + "/nodeSelector/" + escape(k), Value: inj.NodeSelector[k]})
		}
		if r.ReplacedTols {
			ops = append(ops, Op{Op: "add", Path: entry + "/tolerations", Value: inj.Tolerations})
		}
		for _, g := range r.AddedGates {
			if base[i].SchedulingGates == nil {
				ops = append(ops, Op{Op: "add", Path: entry + "/schedulingGates", Value: []corev1.PodSchedulingGate{}})
				base[i].SchedulingGates = []corev1.PodSchedulingGate{}
			}
			ops = append(ops, Op{Op: "add", Path: entry + "/schedulingGates/-", Value: corev1.PodSchedulingGate{Name: g}})
		}
		rs = append(rs, r)
	}
	ops = append(ops, annotate(job, rs)...)
	return ops
}

// desired is the user's entries with want merged in, and the records of it.
func (s PodSpecOverrides) desired(base []trainjob.PodSpecOverride, want []Injection) ([]trainjob.PodSpecOverride, []record) {
	plan := s.plan(base, want)
	list := make([]trainjob.PodSpecOverride, len(base))
	for i := range base {
		base[i].DeepCopyInto(&list[i])
	}
	for _, r := range plan {
		inj := injectionFor(want, r.Job)
		if r.Created {
			list = append(list, trainjob.PodSpecOverride{
				TargetJobs:      []trainjob.TargetJob{{Name: r.Job}},
				NodeSelector:    nonEmpty(inj.NodeSelector),
				Tolerations:     slices.Clone(inj.Tolerations),
				SchedulingGates: slices.Clone(inj.SchedulingGates),
			})
			continue
		}
		i := slices.IndexFunc(list, func(o trainjob.PodSpecOverride) bool {
			return slices.ContainsFunc(o.TargetJobs, func(t trainjob.TargetJob) bool { return t.Name == r.Job })
		})
		o := &list[i]
		for _, k := range r.AddedSelector {
			if o.NodeSelector == nil {
				o.NodeSelector = map[string]string{}
			}
			o.NodeSelector[k] = inj.NodeSelector[k]
		}
		if r.ReplacedTols {
			o.Tolerations = slices.Clone(inj.Tolerations)
		}
		for _, g := range r.AddedGates {
			o.SchedulingGates = append(o.SchedulingGates, corev1.PodSchedulingGate{Name: g})
		}
	}
	return list, plan
}

// plan is what Inject adds for want on top of the user's entries.
func (PodSpecOverrides) plan(base []trainjob.PodSpecOverride, want []Injection) []record {
	var rs []record
	for _, inj := range want {
		i := slices.IndexFunc(base, func(o trainjob.PodSpecOverride) bool {
			return slices.ContainsFunc(o.TargetJobs, func(t trainjob.TargetJob) bool { return t.Name == inj.Name })
		})
		if i < 0 {
			rs = append(rs, record{Job: inj.Name, Created: true})
			continue
		}
		o := &base[i]
		r := record{Job: inj.Name}
		for _, k := range slices.Sorted(maps.Keys(inj.NodeSelector)) {
			if _, ok := o.NodeSelector[k]; !ok {
				r.AddedSelector = append(r.AddedSelector, k)
			}
		}
		if len(inj.Tolerations) > 0 && !equality.Semantic.DeepEqual(o.Tolerations, inj.Tolerations) {
			r.ReplacedTols, r.HadTolerations, r.Tolerations = true, o.Tolerations != nil, o.Tolerations
		}
		for _, g := range inj.SchedulingGates {
			if !slices.ContainsFunc(o.SchedulingGates, func(have corev1.PodSchedulingGate) bool { return have.Name == g.Name }) {
				r.AddedGates = append(r.AddedGates, g.Name)
			}
		}
		rs = append(rs, r)
	}
	return rs
}

// Restore removes exactly what the recorded admission added.
func (PodSpecOverrides) Restore(job *trainjob.TrainJob) []Op {
	rs, ok := records(job)
	if !ok {
		return nil
	}
	var ops []Op
	list := job.Spec.PodSpecOverrides
	var createdIdx []int
	for i := range list {
		r := recordFor(rs, &list[i])
		if r == nil {
			continue
		}
		if r.Created {
			createdIdx = append(createdIdx, i)
			continue
		}
		entry := fmt.Sprintf("%s/%d", specOverridesPath, i)
		left := maps.Clone(list[i].NodeSelector)
		for _, k := range r.AddedSelector {
			if _, ok := left[k]; ok {
				ops = append(ops, Op{Op: "remove", Path: entry + "/nodeSelector/" + escape(k)})
				delete(left, k)
			}
		}
		if len(r.AddedSelector) > 0 && len(left) == 0 && list[i].NodeSelector != nil {
			ops = append(ops, Op{Op: "remove", Path: entry + "/nodeSelector"})
		}
		if r.ReplacedTols {
			if r.HadTolerations {
				ops = append(ops, Op{Op: "add", Path: entry + "/tolerations", Value: r.Tolerations})
			} else if list[i].Tolerations != nil {
				ops = append(ops, Op{Op: "remove", Path: entry + "/tolerations"})
			}
		}
		var gateOps []Op
		kept := 0
		for g := range list[i].SchedulingGates {
			if slices.Contains(r.AddedGates, list[i].SchedulingGates[g].Name) {
				gateOps = append(gateOps, Op{Op: "remove", Path: fmt.Sprintf("%s/schedulingGates/%d", entry, g)})
			} else {
				kept++
			}
		}
		if len(gateOps) > 0 && kept == 0 {
			ops = append(ops, Op{Op: "remove", Path: entry + "/schedulingGates"})
		} else {
			slices.Reverse(gateOps)
			ops = append(ops, gateOps...)
		}
	}
	ops = append(ops, removeAll(specOverridesPath, createdIdx, len(list))...)
	if len(job.Annotations) == 1 {
		// Ours was the only one: leave no empty map behind.
		return append(ops, Op{Op: "remove", Path: "/metadata/annotations"})
	}
	return append(ops, Op{Op: "remove", Path: "/metadata/annotations/" + escape(names.InjectedAnnotation)})
}

// Tampered: the record and the entries it describes are ours to write.
func (PodSpecOverrides) Tampered(old, job *trainjob.TrainJob) []string {
	var before, after string
	var hadBefore bool
	if old != nil {
		before, hadBefore = old.Annotations[names.InjectedAnnotation]
	}
	after, hasAfter := job.Annotations[names.InjectedAnnotation]
	path := "metadata.annotations[" + names.InjectedAnnotation + "]"
	switch {
	case hasAfter && !hadBefore:
		return []string{path}
	case hadBefore && !hasAfter:
		return []string{path + " (removed)"}
	case hadBefore && before != after:
		return []string{path}
	}
	return nil
}

// SharedEntryConflict finds a user entry of spec.podSpecOverrides that
// targets several replicatedJobs whose admissions differ (another flavor's
// nodeSelector, tolerations or gates). A job may be targeted by one entry
// only, so an admission is merged into the user's entry, and one entry can
// place its roles in one way only: the last role's would win for all.
// It returns the entry's path and the roles; "" when there is none.
func SharedEntryConflict(job *trainjob.TrainJob, want []Injection) (string, []string) {
	byRole := make(map[string]*Injection, len(want))
	for i := range want {
		byRole[want[i].Name] = &want[i]
	}
	for i := range job.Spec.PodSpecOverrides {
		o := &job.Spec.PodSpecOverrides[i]
		var first *Injection
		var roles []string
		for _, t := range o.TargetJobs {
			inj, ok := byRole[t.Name]
			if !ok {
				continue
			}
			roles = append(roles, t.Name)
			if first == nil {
				first = inj
				continue
			}
			if !maps.Equal(first.NodeSelector, inj.NodeSelector) ||
				!equality.Semantic.DeepEqual(first.Tolerations, inj.Tolerations) ||
				!equality.Semantic.DeepEqual(first.SchedulingGates, inj.SchedulingGates) {
				return fmt.Sprintf("spec.podSpecOverrides[%d]", i), roles
			}
		}
	}
	return "", nil
}

// HandBack: Kueue's in-tree integration never served Trainer v2.0: our
// entries alone go, as at a stop.
func (s PodSpecOverrides) HandBack(job *trainjob.TrainJob) []Op { return s.Restore(job) }

// MarkForBuiltIn: no in-tree integration serves Trainer v2.0.
func (PodSpecOverrides) MarkForBuiltIn(*trainjob.TrainJob) {}

// InTreeMarked: Kueue's in-tree integration never wrote v2.0's field.
func (PodSpecOverrides) InTreeMarked(*trainjob.TrainJob) []string { return nil }

// Full: Trainer sets no limit on spec.podSpecOverrides.
func (PodSpecOverrides) Full(*trainjob.TrainJob) string { return "" }

func (PodSpecOverrides) Marker() (string, string) {
	return "the annotation " + names.InjectedAnnotation + " (the record of what an admission added)", "leave the annotation alone; edit your entries' other fields freely"
}

func created(job *trainjob.TrainJob) []record {
	rs, _ := records(job)
	return slices.DeleteFunc(rs, func(r record) bool { return !r.Created })
}

func injectionFor(want []Injection, job string) Injection {
	for _, w := range want {
		if w.Name == job {
			return w
		}
	}
	return Injection{}
}

func annotate(job *trainjob.TrainJob, rs []record) []Op {
	data, err := json.Marshal(rs)
	if err != nil {
		// Strings, bools and tolerations only: cannot fail.
		panic(err)
	}
	others := len(job.Annotations)
	if _, ours := job.Annotations[names.InjectedAnnotation]; ours {
		others-- // Restore, run before, removed it (and the map if it was alone)
	}
	if others == 0 {
		return []Op{{Op: "add", Path: "/metadata/annotations", Value: map[string]string{names.InjectedAnnotation: string(data)}}}
	}
	return []Op{{Op: "add", Path: "/metadata/annotations/" + escape(names.InjectedAnnotation), Value: string(data)}}
}

// escape a map key for a JSON Pointer (RFC 6901).
func escape(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
