package queuecondition

// The RBAC of the condition, generated into config/rbac/role.yaml by make
// generate: our condition in TrainJobs' status (reads of TrainJobs,
// Workloads and LocalQueues are the integration's).
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/status,verbs=patch
