package localcluster

import (
	"context"
	"path/filepath"
)

// scheduler is kube-scheduler built from scheduler-plugins, with the
// coscheduling plugin (templates/scheduler.yaml). A MultiKueue manager
// runs no pods, hence no scheduler.
type scheduler struct{}

func (scheduler) name() string { return "kube-scheduler" }

func (scheduler) runs(o Options) bool { return o.MultiKueue != MultiKueueManager }

func (scheduler) start(_ context.Context, b *bringUp) error {
	cfg := b.path("config", "scheduler.yaml")
	if err := writeTemplate("scheduler.yaml", cfg, struct{ Kubeconfig string }{b.kubeconfig("kube-scheduler")}); err != nil {
		return err
	}
	return b.launch("kube-scheduler", nil, "--config="+cfg, "--secure-port=0")
}

// crds: the PodGroup CRD of the coscheduling plugin.
func (scheduler) crds(b *bringUp) ([]string, error) {
	dir, err := ModuleDir(b.toolsDir("scheduler"), "sigs.k8s.io/scheduler-plugins")
	if err != nil {
		return nil, err
	}
	return []string{filepath.Join(dir, "config/crd/bases/scheduling.x-k8s.io_podgroups.yaml")}, nil
}
