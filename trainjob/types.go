// Package trainjob is Kubeflow Trainer's TrainJob (trainer.kubeflow.org/
// v1alpha1) as trainjob-kueue reads it across Trainer releases: the fields
// every release shares, and the three ways releases let a job override its
// runtime's pod templates — spec.podSpecOverrides (v2.0), spec.
// podTemplateOverrides (v2.1) and spec.runtimePatches (v2.2 and later).
//
// Only what we read or patch is modelled. We never write a whole TrainJob,
// only JSON Patches on our own entries, so fields missing here survive.
// +kubebuilder:object:generate=true
package trainjob

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// GroupVersion of TrainJobs in every Trainer release.
var GroupVersion = schema.GroupVersion{Group: "trainer.kubeflow.org", Version: "v1alpha1"}

// TrainJob is a Kubeflow TrainJob.
//
// +kubebuilder:object:root=true
type TrainJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec,omitempty"`
	Status            Status `json:"status,omitempty"`
}

// Spec holds what trainjob-kueue reads or patches of a TrainJob's spec.
type Spec struct {
	RuntimeRef trainer.RuntimeRef `json:"runtimeRef"`
	Trainer    *Trainer           `json:"trainer,omitempty"`
	// PodSpecOverrides is Trainer v2.0's override field.
	PodSpecOverrides []PodSpecOverride `json:"podSpecOverrides,omitempty"`
	// PodTemplateOverrides is Trainer v2.1's.
	PodTemplateOverrides []PodTemplateOverride `json:"podTemplateOverrides,omitempty"`
	// RuntimePatches is Trainer v2.2's and later's.
	RuntimePatches []RuntimePatch `json:"runtimePatches,omitempty"`
	Suspend        *bool          `json:"suspend,omitempty"`
	ManagedBy      *string        `json:"managedBy,omitempty"`
	// Labels Trainer puts on the job's JobSet: Kueue v0.16's built-in
	// integration copies the queue name into them (QueueLabelCopied).
	Labels map[string]string `json:"labels,omitempty"`
}

// Status holds what trainjob-kueue reads of a TrainJob's status.
type Status struct {
	Conditions []metav1.Condition  `json:"conditions,omitempty"`
	JobsStatus []trainer.JobStatus `json:"jobsStatus,omitempty"`
	// TrainerStatus is what Trainer's status server reports of the
	// trainer step (v2.2+): progress and time left.
	TrainerStatus *trainer.TrainerStatus `json:"trainerStatus,omitempty"`
}

// PodSpecOverride is an entry of Trainer v2.0's spec.podSpecOverrides,
// merged into the pod spec of its target jobs with a strategic merge patch.
// A job may be the target of one entry only.
type PodSpecOverride struct {
	TargetJobs      []TargetJob                `json:"targetJobs"`
	NodeSelector    map[string]string          `json:"nodeSelector,omitempty"`
	Tolerations     []corev1.Toleration        `json:"tolerations,omitempty"`
	SchedulingGates []corev1.PodSchedulingGate `json:"schedulingGates,omitempty"`
}

// Trainer is spec.trainer. numProcPerNode is an integer or a string ("auto",
// "cpu", "gpu") before Trainer v2.2 and an integer since: read as either.
type Trainer struct {
	Image            *string                      `json:"image,omitempty"`
	Command          []string                     `json:"command,omitempty"`
	Args             []string                     `json:"args,omitempty"`
	Env              []corev1.EnvVar              `json:"env,omitempty"`
	NumNodes         *int32                       `json:"numNodes,omitempty"`
	ResourcesPerNode *corev1.ResourceRequirements `json:"resourcesPerNode,omitempty"`
	NumProcPerNode   *intstr.IntOrString          `json:"numProcPerNode,omitempty"`
}

// TargetJob names a replicatedJob.
type TargetJob struct {
	Name string `json:"name"`
}

// RuntimePatch is an entry of spec.runtimePatches (Trainer v2.2 and later):
// a strategic merge patch of the runtime's spec, keyed by the manager that
// owns it.
type RuntimePatch struct {
	Manager string       `json:"manager"`
	Time    *metav1.Time `json:"time,omitempty"`
	// TrainingRuntimeSpec is the patch, kept as written.
	TrainingRuntimeSpec *runtime.RawExtension `json:"trainingRuntimeSpec,omitempty"`
}

// TrainJobList is a list of TrainJobs.
// +kubebuilder:object:root=true
type TrainJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TrainJob `json:"items"`
}
