package localcluster

import (
	"context"
	"path/filepath"
)

// scheduler is kube-scheduler built from scheduler-plugins, with the
// coscheduling plugin (templates/scheduler.yaml), or on a Workload API
// cluster Kubernetes' own, whose default profile gang schedules
// Kubernetes' PodGroups (templates/scheduler-workload-api.yaml). A
// MultiKueue manager runs no pods, hence no scheduler.
type scheduler struct{}

func (scheduler) name() string { return "kube-scheduler" }

func (scheduler) runs(o Options) bool { return o.MultiKueue != MultiKueueManager }

func (scheduler) start(_ context.Context, b *bringUp) error {
	cfg := b.path("config", "scheduler.yaml")
	template := "scheduler.yaml"
	if b.o.workloadAPI() {
		template = "scheduler-workload-api.yaml"
	}
	if err := writeTemplate(template, cfg, struct{ Kubeconfig string }{b.kubeconfig("kube-scheduler")}); err != nil {
		return err
	}
	return b.launch("kube-scheduler", nil, append(workloadAPIFlags(b.o, false), "--config="+cfg, "--secure-port=0")...)
}

// crds: the PodGroup CRD of the coscheduling plugin, where it runs.
func (scheduler) crds(b *bringUp) ([]string, error) {
	if b.o.workloadAPI() {
		return nil, nil
	}
	dir, err := ModuleDir(b.toolsDir("scheduler"), "sigs.k8s.io/scheduler-plugins")
	if err != nil {
		return nil, err
	}
	return []string{filepath.Join(dir, "config/crd/bases/scheduling.x-k8s.io_podgroups.yaml")}, nil
}
