package trainjob

// queueLabel is Kueue's queue-name label (sigs.k8s.io/kueue's
// constants.QueueLabel; this package links no Kueue package).
const queueLabel = "kueue.x-k8s.io/queue-name"

// QueueLabelCopied tells whether the job's spec.labels carry Kueue's
// queue-name label, as Kueue v0.16's built-in TrainJob webhook copies it
// there for Trainer to put on the job's JobSet. Under trainjob-kueue such a
// JobSet is queued a second time by Kueue's own JobSet integration (a
// Workload of its own, and a suspended JobSet under a running job): the
// label must go before a job of ours starts.
func (j *TrainJob) QueueLabelCopied() bool {
	_, ok := j.Spec.Labels[queueLabel]
	return ok
}

// QueueLabelCopiedPath is the JSON Patch path of that label.
const QueueLabelCopiedPath = "/spec/labels/kueue.x-k8s.io~1queue-name"
