package trainjob

import (
	"maps"
	"slices"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies t into out.
func (t *TrainJob) DeepCopyInto(out *TrainJob) {
	*out = *t
	out.TypeMeta = t.TypeMeta
	t.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	t.Spec.DeepCopyInto(&out.Spec)
	t.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of t.
func (t *TrainJob) DeepCopy() *TrainJob {
	if t == nil {
		return nil
	}
	out := new(TrainJob)
	t.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (t *TrainJob) DeepCopyObject() runtime.Object { return t.DeepCopy() }

// DeepCopyInto copies s into out.
func (s *Spec) DeepCopyInto(out *Spec) {
	*out = *s
	s.RuntimeRef.DeepCopyInto(&out.RuntimeRef)
	if s.Trainer != nil {
		out.Trainer = s.Trainer.DeepCopy()
	}
	if s.PodSpecOverrides != nil {
		out.PodSpecOverrides = make([]PodSpecOverride, len(s.PodSpecOverrides))
		for i := range s.PodSpecOverrides {
			s.PodSpecOverrides[i].DeepCopyInto(&out.PodSpecOverrides[i])
		}
	}
	if s.PodTemplateOverrides != nil {
		out.PodTemplateOverrides = make([]PodTemplateOverride, len(s.PodTemplateOverrides))
		for i := range s.PodTemplateOverrides {
			s.PodTemplateOverrides[i].DeepCopyInto(&out.PodTemplateOverrides[i])
		}
	}
	if s.RuntimePatches != nil {
		out.RuntimePatches = make([]RuntimePatch, len(s.RuntimePatches))
		for i := range s.RuntimePatches {
			s.RuntimePatches[i].DeepCopyInto(&out.RuntimePatches[i])
		}
	}
	if s.Suspend != nil {
		v := *s.Suspend
		out.Suspend = &v
	}
	if s.ManagedBy != nil {
		v := *s.ManagedBy
		out.ManagedBy = &v
	}
}

// DeepCopyInto copies s into out.
func (s *Status) DeepCopyInto(out *Status) {
	*out = *s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	if s.JobsStatus != nil {
		out.JobsStatus = make([]trainer.JobStatus, len(s.JobsStatus))
		for i := range s.JobsStatus {
			s.JobsStatus[i].DeepCopyInto(&out.JobsStatus[i])
		}
	}
}

// DeepCopy returns a copy of t.
func (t *Trainer) DeepCopy() *Trainer {
	if t == nil {
		return nil
	}
	out := &Trainer{}
	*out = *t
	if t.Image != nil {
		v := *t.Image
		out.Image = &v
	}
	out.Command = slices.Clone(t.Command)
	out.Args = slices.Clone(t.Args)
	if t.Env != nil {
		out.Env = make([]corev1.EnvVar, len(t.Env))
		for i := range t.Env {
			t.Env[i].DeepCopyInto(&out.Env[i])
		}
	}
	if t.NumNodes != nil {
		v := *t.NumNodes
		out.NumNodes = &v
	}
	if t.ResourcesPerNode != nil {
		out.ResourcesPerNode = t.ResourcesPerNode.DeepCopy()
	}
	if t.NumProcPerNode != nil {
		v := *t.NumProcPerNode
		out.NumProcPerNode = &v
	}
	return out
}

// DeepCopyInto copies o into out.
func (o *PodSpecOverride) DeepCopyInto(out *PodSpecOverride) {
	out.TargetJobs = slices.Clone(o.TargetJobs)
	out.NodeSelector = maps.Clone(o.NodeSelector)
	out.Tolerations = nil
	if o.Tolerations != nil {
		out.Tolerations = make([]corev1.Toleration, len(o.Tolerations))
		for i := range o.Tolerations {
			o.Tolerations[i].DeepCopyInto(&out.Tolerations[i])
		}
	}
	out.SchedulingGates = slices.Clone(o.SchedulingGates)
}

// DeepCopyInto copies p into out.
func (p *RuntimePatch) DeepCopyInto(out *RuntimePatch) {
	*out = *p
	if p.Time != nil {
		out.Time = p.Time.DeepCopy()
	}
	if p.TrainingRuntimeSpec != nil {
		out.TrainingRuntimeSpec = p.TrainingRuntimeSpec.DeepCopy()
	}
}

// DeepCopyInto copies l into out.
func (l *TrainJobList) DeepCopyInto(out *TrainJobList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]TrainJob, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopyObject implements runtime.Object.
func (l *TrainJobList) DeepCopyObject() runtime.Object {
	out := new(TrainJobList)
	l.DeepCopyInto(out)
	return out
}
