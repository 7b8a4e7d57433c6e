package trainjob

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodTemplateOverride is an entry of Trainer v2.1's spec.podTemplateOverrides:
// metadata and pod spec fields merged, in list order, into the pod template
// of the target jobs with a strategic merge patch. Trainer v2.2 replaced the
// field with runtimePatches and dropped the Go type, so it is modelled here,
// field for field as Trainer v2.1.x serves it.
type PodTemplateOverride struct {
	TargetJobs []PodTemplateOverrideTargetJob `json:"targetJobs,omitempty"`
	Metadata   *metav1.ObjectMeta             `json:"metadata,omitempty"`
	Spec       *PodTemplateSpecOverride       `json:"spec,omitempty"`
}

// PodTemplateOverrideTargetJob names a replicatedJob of the runtime.
type PodTemplateOverrideTargetJob struct {
	Name string `json:"name,omitempty"`
}

// PodTemplateSpecOverride is the pod spec part of a PodTemplateOverride.
type PodTemplateSpecOverride struct {
	ServiceAccountName *string                       `json:"serviceAccountName,omitempty"`
	NodeSelector       map[string]string             `json:"nodeSelector,omitempty"`
	Affinity           *corev1.Affinity              `json:"affinity,omitempty"`
	Tolerations        []corev1.Toleration           `json:"tolerations,omitempty"`
	Volumes            []corev1.Volume               `json:"volumes,omitempty"`
	InitContainers     []ContainerOverride           `json:"initContainers,omitempty"`
	Containers         []ContainerOverride           `json:"containers,omitempty"`
	SchedulingGates    []corev1.PodSchedulingGate    `json:"schedulingGates,omitempty"`
	ImagePullSecrets   []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
}

// ContainerOverride overrides a container of the target jobs' pods.
type ContainerOverride struct {
	Name         string               `json:"name,omitempty"`
	Env          []corev1.EnvVar      `json:"env,omitempty"`
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}
