package localcluster

import "context"

// controllerManager is kube-controller-manager with the controllers a
// batch cluster without kubelets needs: Jobs, garbage collection,
// namespaces, node lifecycle (it lifts new nodes' not-ready taint), pod GC
// and TTL after finished; with DRA, ResourceClaims.
type controllerManager struct{}

func (controllerManager) name() string      { return "kube-controller-manager" }
func (controllerManager) runs(Options) bool { return true }

func (controllerManager) start(_ context.Context, b *bringUp) error {
	controllers := "job-controller,garbage-collector-controller,namespace-controller,node-lifecycle-controller,pod-garbage-collector-controller,ttl-after-finished-controller"
	if b.o.DRA {
		// A pod's claims from its ResourceClaimTemplates, made and freed.
		controllers += ",resourceclaim-controller"
	}
	if b.o.workloadAPI() {
		// A PodGroup is kept while a pod names it (the API server's
		// finalizer), and freed by this controller once none does.
		controllers += ",podgroup-protection-controller"
	}
	return b.launch("kube-controller-manager", nil, append(workloadAPIFlags(b.o, false),
		"--kubeconfig="+b.kubeconfig("kube-controller-manager"),
		"--controllers="+controllers,
		"--use-service-account-credentials=false",
		"--secure-port=0",
		"--leader-elect=false",
		// kwok's heartbeat stage beats every 20–45 s; against the 50 s
		// default a node whose beat is late on a busy machine is NotReady
		// for a moment, and the node lifecycle controller marks its pods
		// not ready: a job's PodsReady never comes (seen on v1.37.2, the
		// recovery suite's job evicted by its start timeout).
		"--node-monitor-grace-period=3m",
	)...)
}
