package integration

// The RBAC of the integration, generated into config/rbac/role.yaml by
// make generate (controller-gen): a watch or write added without its
// marker fails in the local cluster, which runs the manager under exactly
// that role.
//
// TrainJobs: read, and patch our override entries and spec.suspend; a
// Workload's controller reference blocks the job's deletion.
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainingruntimes;clustertrainingruntimes,verbs=get;list;watch
//
// Trainer v2.0 reports its Jobs' state only on the JobSet.
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets,verbs=get;list;watch
//
// The job framework's Workloads, and holds on them.
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/finalizers,verbs=update
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues;clusterqueues;resourceflavors;admissionchecks;workloadpriorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
//
// Trainer v2.3's runtime snapshots (<trainjob>-runtime-snapshot), read one
// by one: no ConfigMap is listed or watched.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get
//
// A preempted job's preemption notice, written on its running pods (an
// annotation the downward API hands to the training): listed once per
// notice, with its Jobs to prove them the job's by UID.
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=list
//
// Our events, core/v1 and events.k8s.io.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
