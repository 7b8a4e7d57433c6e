// Package e2e runs scenarios on the whole local control plane: real
// kube-apiserver, kube-controller-manager, kube-scheduler with coscheduling,
// kwok GPU nodes, Kueue, JobSet, Kubeflow Trainer and trainjob-kueue, each
// its own process. Tests assert on objects and pods, never on logs.
//
// With KUBECONFIG set the tests use that cluster (make cluster-up, then
// KUBECONFIG=.cluster/local/kubeconfig); otherwise they bring up their own
// cluster "e2e" and tear it down afterwards (E2E_KEEP=1 keeps it).
package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

var (
	k8s client.Client
	ctx = context.Background()
	// auditLog is the API server's audit log of the local cluster under test.
	auditLog string
	// kubeconfigPath is the admin kubeconfig of the cluster under test.
	kubeconfigPath string
	// schedulerPlugins is the suite's cluster for the tests of
	// scheduler-plugins' coscheduling (onSchedulerPlugins).
	schedulerPlugins secondCluster
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		// E2E_TRAINER_VERSION, E2E_KUEUE_VERSION and
		// E2E_KUBERNETES_VERSION run the tier on other Trainer, Kueue and
		// Kubernetes releases, in a cluster of their own.
		version, kueueVersion, kubernetes := os.Getenv("E2E_TRAINER_VERSION"), os.Getenv("E2E_KUEUE_VERSION"), os.Getenv("E2E_KUBERNETES_VERSION")
		name := "e2e"
		for _, v := range []string{version, kueueVersion, kubernetes} {
			if v != "" {
				name += "-" + v
			}
		}
		// E2E_CLUSTER names the cluster when two runs of the tier share
		// the machine (make test runs it in two halves at once).
		if n := os.Getenv("E2E_CLUSTER"); n != "" {
			name = n
		}
		settings := localcluster.Settings{KubernetesVersion: kubernetes, TrainerVersion: version, KueueVersion: kueueVersion, Provisioning: true}
		c, err := localcluster.Up(ctx, localcluster.Options{Name: name, Root: root, Progress: os.Stderr,
			// ProvisioningRequests on (a fake provisioner): the
			// provisioning admission check's scenarios run here.
			// TrainJob writes with their bodies: each of our writes is
			// judged by what it changed.
			Settings: settings, AuditTrainJobBodies: true})
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: bringing up the local control plane: %v\n", err)
			return 1
		}
		if os.Getenv("E2E_KEEP") == "" {
			defer func() {
				if err := localcluster.Down(root, name, os.Stderr); err != nil {
					fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
				}
			}()
		}
		kubeconfig = c.Kubeconfig
		schedulerPlugins = secondCluster{root: root, name: name + "-cosched", settings: settings}
		defer schedulerPlugins.down()
	}
	// A local cluster keeps its audit log next to its kubeconfig.
	auditLog = filepath.Join(filepath.Dir(kubeconfig), "audit.log")
	kubeconfigPath = kubeconfig
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: fixtures.Scheme()}); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	return m.Run()
}
