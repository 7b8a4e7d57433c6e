package multikueue

// The RBAC of MultiKueue's side, generated into config/rbac/role.yaml by
// make generate (controller-gen). The Workloads and TrainJobs it reads and
// the Workload status it writes (the hold) are the integration's too
// (integration/rbac.go).
//
// On a MultiKueue manager: which Secret holds a worker's kubeconfig (read
// one by one; the Secret itself through config/multikueue's Role, in
// Kueue's namespace, for the Secrets it names).
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=multikueueclusters,verbs=get
