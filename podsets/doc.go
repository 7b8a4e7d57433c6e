// Package podsets projects a TrainJob and its (Cluster)TrainingRuntime onto
// the Kueue PodSets of the Workload that queues it: one PodSet per
// replicatedJob of the runtime, in runtime order, with the pod count and pod
// template Kubeflow Trainer will really run.
//
// Everything here is pure: data in, data out. No client, no clock, no
// globals. The Trainer API version a cluster runs only changes how the user's
// pod overrides are expressed, and that difference hides behind Shape.
package podsets
