// Package overview is the queue state of every TrainJob at a glance — the
// `list` command: per job its queue, state, position, flavors, pods, GPUs,
// how long it waited and how often it was preempted.
//
// Rows computes the table from data alone (rows.go); Fetch reads that data
// with one list call per kind, never one per job (fetch.go); render.go
// prints it.
package overview
