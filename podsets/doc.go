// Package podsets projects a TrainJob and its (Cluster)TrainingRuntime onto
// the Kueue PodSets of the Workload that queues it: one PodSet per
// replicatedJob of the runtime, in runtime order, with the pod count and pod
// template Kubeflow Trainer will really run.
//
// build.go is the projection itself, Trainer's rules in the order Trainer
// applies them: which pods each replicatedJob runs, what the TrainJob's
// trainer fields and overrides change in them, which quantities
// Kubernetes would refuse, and the PodSets. The other files hold what it
// uses and what reads its result.
//
// Everything here is pure: data in, data out. No client, no clock, no
// globals. The Trainer API version a cluster runs only changes how the user's
// pod overrides are expressed, and that difference hides behind Shape.
package podsets
