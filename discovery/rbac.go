package discovery

// Which Trainer API shape, which Workload defaults and whether
// scheduler-plugins' PodGroups are installed.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
