package trainjob

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// AddToScheme registers our TrainJob and Trainer's runtime types (whose
// fields we read have not changed across releases) under trainer.kubeflow.org/
// v1alpha1. Trainer's own TrainJob type must not be registered next to it.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&TrainJob{}, &TrainJobList{},
		&trainer.TrainingRuntime{}, &trainer.TrainingRuntimeList{},
		&trainer.ClusterTrainingRuntime{}, &trainer.ClusterTrainingRuntimeList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
