package main

// RBAC markers: make generate writes them into config/rbac/role.yaml;
// make vet (verify-generate) fails on a stale role, test/install checks it
// least-privilege, and the local cluster runs the manager under exactly it.

// The caBundle of our own webhook configurations (internal certificates).
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=trainjob-kueue-mutating-webhook-configuration,verbs=update;patch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=trainjob-kueue-validating-webhook-configuration,verbs=update;patch
//
// The secure metrics endpoint authenticates and authorizes its scrapers.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews;selfsubjectreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
//
// In our namespace only: leader election and the certificate Secret.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=trainjob-kueue-system,resources=leases,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",namespace=trainjob-kueue-system,resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=trainjob-kueue-system,resources=secrets,resourceNames=trainjob-kueue-webhook-server-cert,verbs=update;patch
