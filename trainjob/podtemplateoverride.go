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

// DeepCopyInto copies o into out.
func (o *PodTemplateOverride) DeepCopyInto(out *PodTemplateOverride) {
	*out = *o
	if o.TargetJobs != nil {
		out.TargetJobs = append([]PodTemplateOverrideTargetJob(nil), o.TargetJobs...)
	}
	if o.Metadata != nil {
		out.Metadata = o.Metadata.DeepCopy()
	}
	if o.Spec != nil {
		out.Spec = o.Spec.DeepCopy()
	}
}

// DeepCopy returns a copy of s.
func (s *PodTemplateSpecOverride) DeepCopy() *PodTemplateSpecOverride {
	if s == nil {
		return nil
	}
	out := &PodTemplateSpecOverride{}
	*out = *s
	if s.ServiceAccountName != nil {
		v := *s.ServiceAccountName
		out.ServiceAccountName = &v
	}
	if s.NodeSelector != nil {
		out.NodeSelector = make(map[string]string, len(s.NodeSelector))
		for k, v := range s.NodeSelector {
			out.NodeSelector[k] = v
		}
	}
	if s.Affinity != nil {
		out.Affinity = s.Affinity.DeepCopy()
	}
	if s.Tolerations != nil {
		out.Tolerations = make([]corev1.Toleration, len(s.Tolerations))
		for i := range s.Tolerations {
			s.Tolerations[i].DeepCopyInto(&out.Tolerations[i])
		}
	}
	if s.Volumes != nil {
		out.Volumes = make([]corev1.Volume, len(s.Volumes))
		for i := range s.Volumes {
			s.Volumes[i].DeepCopyInto(&out.Volumes[i])
		}
	}
	out.InitContainers = copyContainerOverrides(s.InitContainers)
	out.Containers = copyContainerOverrides(s.Containers)
	if s.SchedulingGates != nil {
		out.SchedulingGates = append([]corev1.PodSchedulingGate(nil), s.SchedulingGates...)
	}
	if s.ImagePullSecrets != nil {
		out.ImagePullSecrets = append([]corev1.LocalObjectReference(nil), s.ImagePullSecrets...)
	}
	return out
}

func copyContainerOverrides(in []ContainerOverride) []ContainerOverride {
	if in == nil {
		return nil
	}
	out := make([]ContainerOverride, len(in))
	for i := range in {
		out[i].Name = in[i].Name
		if in[i].Env != nil {
			out[i].Env = make([]corev1.EnvVar, len(in[i].Env))
			for j := range in[i].Env {
				in[i].Env[j].DeepCopyInto(&out[i].Env[j])
			}
		}
		if in[i].VolumeMounts != nil {
			out[i].VolumeMounts = make([]corev1.VolumeMount, len(in[i].VolumeMounts))
			for j := range in[i].VolumeMounts {
				in[i].VolumeMounts[j].DeepCopyInto(&out[i].VolumeMounts[j])
			}
		}
	}
	return out
}
