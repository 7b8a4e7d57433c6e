package discovery

// RBAC markers: make generate writes them into config/rbac/role.yaml;
// make vet (verify-generate) fails on a stale role, test/install checks it
// least-privilege, and the local cluster runs the manager under exactly it.

// Which Trainer API shape, which Workload defaults and whether
// scheduler-plugins' PodGroups are installed.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
