package podsets

import (
	corev1 "k8s.io/api/core/v1"
)

// Labels and names Trainer gives the roles of a runtime.
const (
	// AncestorLabel marks the replicatedJob that plays one of Trainer's
	// well-known steps (dataset-initializer, model-initializer, trainer).
	AncestorLabel = "trainer.kubeflow.org/trainjob-ancestor-step"

	AncestorTrainer            = "trainer"
	AncestorDatasetInitializer = "dataset-initializer"
	AncestorModelInitializer   = "model-initializer"

	// NodeName is both the MPI worker replicatedJob and the trainer
	// container every runtime names "node".
	NodeName = "node"
)

// Role is one replicatedJob of a TrainJob as Trainer will run it.
type Role struct {
	// Name of the replicatedJob; also the PodSet name.
	Name string
	// Ancestor is the value of AncestorLabel, empty for custom jobs.
	Ancestor string
	// Replicas is the number of Jobs JobSet creates for this role.
	Replicas int32
	// PodsPerReplica is the parallelism (= completions) Trainer sets on
	// each of those Jobs.
	PodsPerReplica int32
	// Template is the pod template after the runtime, the user's
	// overrides and the TrainJob's trainer fields were applied.
	Template corev1.PodTemplateSpec
	// DependsOn are the roles JobSet waits for before it creates this
	// role's Jobs.
	DependsOn []Dependency
}

// Dependency is a role another role waits for, and for what.
type Dependency struct {
	Name string
	// Complete: the role's Jobs must have succeeded; otherwise their pods
	// must be ready.
	Complete bool
}

// Count is the number of pods the role runs at once.
func (r *Role) Count() int32 { return r.Replicas * r.PodsPerReplica }

// IsInitializer reports whether the role runs before the trainer nodes.
func (r *Role) IsInitializer() bool {
	return r.Ancestor == AncestorDatasetInitializer || r.Ancestor == AncestorModelInitializer
}
