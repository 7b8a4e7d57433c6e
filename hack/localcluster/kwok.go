package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// kwok plays the kubelet of the fake nodes (annotated
// kwok.x-k8s.io/node=fake) with the stages its module ships: nodes ready,
// pods running and completing after their pod-complete delay.
type kwok struct{}

func (kwok) name() string        { return "kwok" }
func (kwok) runs(o Options) bool { return o.MultiKueue != MultiKueueManager }
func (kwok) ports() []string     { return []string{"kwok"} }

func (kwok) start(_ context.Context, b *bringUp) error {
	dir, err := ModuleDir(b.toolsDir("kwok"), "sigs.k8s.io/kwok")
	if err != nil {
		return err
	}
	stages := []string{
		"kustomize/stage/node/fast/node-initialize.yaml",
		"kustomize/stage/node/heartbeat/node-heartbeat.yaml",
		"kustomize/stage/pod/general/pod-create.yaml",
		"kustomize/stage/pod/general/pod-init-container-running.yaml",
		"kustomize/stage/pod/general/pod-init-container-completed.yaml",
		"kustomize/stage/pod/general/pod-ready.yaml",
		"kustomize/stage/pod/general/pod-complete.yaml",
		"kustomize/stage/pod/general/pod-delete.yaml",
	}
	for i := range stages {
		stages[i] = filepath.Join(dir, stages[i])
	}
	return b.launch("kwok", nil,
		"--kubeconfig="+b.kubeconfig("kwok"),
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--config="+strings.Join(stages, ","),
		fmt.Sprintf("--server-address=127.0.0.1:%d", b.ports["kwok"]),
	)
}
