// Package integration is the Kueue job-framework integration for Kubeflow
// Trainer's TrainJob: the jobframework.GenericJob, its reconciler and
// webhook, and the writes that start and stop a TrainJob on admission and
// eviction. It is the only package that talks to the API server; what to
// compute and what to write come from podsets, quota and shape.
package integration
