// Package integration is the Kueue job-framework integration for Kubeflow
// Trainer's TrainJob: the jobframework.GenericJob adapter, its reconciler
// and webhook, and the writes that start and stop a TrainJob on admission
// and eviction.
//
// The rule of the layout: integration/ is the only package that writes to
// the API server (with gang's keeper, which keeps the PodGroups of running
// jobs); explain/ reads; podsets, quota, shape and gang's plans compute from
// data alone. Within a reconcile, observe.go reads everything once and the
// adapter's answers are functions of the job and that observation;
// start.go and stop.go are where writes happen.
package integration
