// Package integration is the Kueue job-framework integration for Kubeflow
// Trainer's TrainJob: the jobframework.GenericJob adapter and its
// reconciler, which start a TrainJob on admission and stop it on eviction.
//
// A reconcile observes once (observe.go, from the informer cache, Trainer's
// runtime snapshot through package runtimesource), and every answer the
// job framework asks for is a function of the job and that observation.
// The files that write are named for what they write: start.go,
// start_gangs.go (our PodGroups) and stop.go write the TrainJob through
// package jobpatch; hold_for_runtime.go and hold_for_policy.go hold a
// Workload out of the queue; stop_notice.go keeps a preempted job running
// through its preemption notice, and writes the notice on its Workload
// and its pods. Every event goes through speak.go.
//
// For a job dispatched by MultiKueue, multikueue.go alone changes the
// framework's answers: it runs remotely, and is never started here. What
// reacts to Workloads between a MultiKueue manager and its workers is
// package multikueue's (worker_refusals.go, name_clashes.go, hold.go,
// worker_clients.go). A manager that stands by for Kueue's built-in
// integration runs package standby's hand-back, not this package.
//
// The webhook is package webhook's, the metrics package metrics', the
// preemption-cost boosts package priorityboost's; cmd/trainjob-kueue
// lists every controller (controllers.go).
package integration
