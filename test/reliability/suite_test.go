// Package reliability is issue 16's reliability tiers on the whole local
// control plane: the fault tier (the manager SIGKILLed at every step of an
// admission, the API server restarted mid-burst) judged on every version of
// every TrainJob the API server held, as its audit log recorded them; the
// bad-input table (hostile or careless input, each with its exact answer);
// and the hot-loop check (what the manager asks of the API server while
// nothing happens).
//
// It brings up a cluster of its own (e2e-reliability[-<trainer>]) whose
// audit log records TrainJob writes with their bodies, and tears it down
// afterwards (E2E_KEEP=1 keeps it). E2E_TRAINER_VERSION picks the Trainer
// release, as for the other e2e packages.
package reliability_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

var (
	ctx = context.Background()
	k8s client.Client
	// cluster is the local control plane under test: its audit log, and
	// the components the fault tier kills.
	cluster *localcluster.Cluster
	// overrides is the installed Trainer's override field
	// ("spec.podTemplateOverrides", "spec.runtimePatches", …).
	overrides string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	o := localcluster.ForTests("e2e-reliability", localcluster.Options{Root: root, AuditTrainJobBodies: true})
	// A cluster left running by an earlier E2E_KEEP run would not have
	// this run's manager binary: always a fresh one.
	if err := localcluster.Down(root, o.Name, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "reliability: %v\n", err)
		return 1
	}
	var down func()
	if cluster, down, err = localcluster.UpForTests(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "reliability: %v\n", err)
		return 1
	}
	defer down()
	if k8s, err = cluster.Client(fixtures.Scheme()); err != nil {
		fmt.Fprintf(os.Stderr, "reliability: %v\n", err)
		return 1
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: "trainjobs.trainer.kubeflow.org"}, crd); err != nil {
		fmt.Fprintf(os.Stderr, "reliability: %v\n", err)
		return 1
	}
	s, err := discovery.DetectShape(crd)
	if err != nil {
		fmt.Fprintf(os.Stderr, "reliability: %v\n", err)
		return 1
	}
	overrides = s.Name()
	return m.Run()
}
