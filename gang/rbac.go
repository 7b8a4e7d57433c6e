package gang

// RBAC markers: make generate writes them into config/rbac/role.yaml;
// make vet (verify-generate) fails on a stale role, test/install checks it
// least-privilege, and the local cluster runs the manager under exactly it.

// Gang scheduling: size the PodGroups Trainer makes, create our own for
// jobs that opt in. A gang re-admitted after some of its pods succeeded:
// its child Jobs' completed pods, which are not created again, leave its
// gang (listed then, never cached).
// +kubebuilder:rbac:groups=scheduling.x-k8s.io,resources=podgroups,verbs=get;list;watch;create;patch
// the Workload API's PodGroups (gang mode workload-api): made per admission,
// deleted when it ends; read by the pod webhook when a pod joins one.
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=podgroups,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=list
