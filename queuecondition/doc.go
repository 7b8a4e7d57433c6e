// Package queuecondition tells a TrainJob's queue state where users' tools
// look: a condition of our own type (names.AdmittedCondition) in the
// TrainJob's status.conditions, so kubectl get/wait, the Kubeflow SDK and
// dashboards read that a suspended job is queued (on which LocalQueue and
// ClusterQueue), held (for what, and the fix), admitted, requeued after an
// eviction, or being evicted.
//
//   - condition.go: the table from the lifecycle's states to the condition
//     (its status, reason and words), and which states are not written;
//   - patch.go: the one write, a JSON patch of the status subresource that
//     touches our entry alone, sent through jobpatch.GuardedStatus (guarded
//     by the resourceVersion it was rendered from, as every TrainJob write
//     of ours; a stale copy is tried again once the cache caught up, never
//     read live, never appended twice);
//   - controller.go: when it is written: only when the state changes,
//     never for a position or a message of Kueue's that changes with the
//     queue; a job's first state only once it has lasted Settle, and an
//     admission once our start wrote the job (or Settle passed), so the
//     write never races the start's.
package queuecondition
