// Package shape knows how each Kubeflow Trainer API version lets a TrainJob
// override its runtime's pod templates, and renders the JSON Patches that
// inject Kueue's admission into them and take it out again.
//
// Pure: data in, data out. The integration sends the patches.
package shape

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Injection is what an admission puts on the pods of one role.
type Injection struct {
	// Name of the PodSet, which is the replicatedJob's name.
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	// NodeSelector holds only the keys admission adds.
	NodeSelector map[string]string
	// Tolerations is the complete list the pods must end up with: Trainer
	// merges overrides with a strategic merge patch that replaces the whole
	// list, so an entry carrying only the flavor's would drop the runtime's
	// and the user's.
	Tolerations     []corev1.Toleration
	SchedulingGates []corev1.PodSchedulingGate
}

// Op is one JSON Patch (RFC 6902) operation.
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Shape is one Trainer API version's override field.
type Shape interface {
	podsets.Shape
	// Name is the override field, as users know it.
	Name() string
	// Capabilities are what the release with this shape lets us do.
	Capabilities() Capabilities
	// Injected reports whether job carries entries an integration injected
	// at admission (ours, or Kueue in-tree's).
	Injected(job *trainjob.TrainJob) bool
	// Inject returns the operations that make job's injected entries exactly
	// want, after every entry of the user; nil when they already are.
	Inject(job *trainjob.TrainJob, want []Injection) []Op
	// Restore returns the operations that remove every injected entry and
	// nothing else; nil when there is none.
	Restore(job *trainjob.TrainJob) []Op
	// Tampered returns the field paths where job's entries carrying our
	// ownership marker differ from old's: added, changed or removed (nil
	// old: every marked entry). Only trainjob-kueue may write them.
	Tampered(old, job *trainjob.TrainJob) []string
	// Marker says what marks our entries and how a user keeps an entry of
	// their own, for refusals of tampering.
	Marker() (what, fix string)
	// InTreeMarked returns the field paths of entries that carry the marker
	// of Kueue's in-tree TrainJob integration, which it writes at admission
	// and which are removed at every admission as an integration's.
	InTreeMarked(job *trainjob.TrainJob) []string
	// HandBack returns the operations that hand a stopped job back to
	// Kueue's built-in TrainJob integration: our entries removed, that
	// integration's left as they are (it may be filling them this
	// moment), and the marker it needs to start or stop the job added
	// where missing (MarkForBuiltIn); nil when there is nothing to do.
	HandBack(job *trainjob.TrainJob) []Op
	// MarkForBuiltIn adds to a new job what Kueue's built-in TrainJob
	// integration needs to start and stop it (Kueue v0.17+'s webhook adds
	// an empty runtime patch of its manager at create, and its reconciler
	// fails on a job without one), so the job stays runnable by either
	// integration across a switch. It does nothing where that integration
	// needs nothing, or where the list has no room for it.
	MarkForBuiltIn(job *trainjob.TrainJob)
	// Full says why the override list has no room left for the entry an
	// admission adds, so the API server would refuse the injection and the
	// job could never start; "" when there is room.
	Full(job *trainjob.TrainJob) string
}

// removeAll removes the entries at idx (ascending) of the list at path of
// total entries: the whole list when they are all of it, so no empty list
// is left behind; back to front otherwise, so earlier indexes stay valid.
func removeAll(path string, idx []int, total int) []Op {
	if len(idx) == 0 {
		return nil
	}
	if len(idx) == total {
		return []Op{{Op: "remove", Path: path}}
	}
	ops := make([]Op, 0, len(idx))
	for i := len(idx) - 1; i >= 0; i-- {
		ops = append(ops, Op{Op: "remove", Path: fmt.Sprintf("%s/%d", path, idx[i])})
	}
	return ops
}

// DropCopiedQueueLabel removes the queue-name label Kueue v0.16's built-in
// integration copied into spec.labels (trainjob.QueueLabelCopied): on the
// job's JobSet it would have Kueue's JobSet integration queue the JobSet a
// second time. Written with the start's entries and with a hand-back,
// while the job is suspended.
func DropCopiedQueueLabel(j *trainjob.TrainJob) []Op {
	if !j.QueueLabelCopied() {
		return nil
	}
	return []Op{{Op: "remove", Path: trainjob.QueueLabelCopiedPath}}
}
