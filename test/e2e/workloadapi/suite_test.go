// Package workloadapi gang schedules TrainJobs through Kubernetes' own
// Workload API (gang mode workload-api: PodGroups of
// scheduling.k8s.io/v1beta1, placed whole by kube-scheduler) on a local
// control plane of Kubernetes v1.37.2 with the GenericWorkload gate on
// (make cluster-up KUBERNETES_VERSION=v1.37.2), Kueue v0.19.2 and Trainer
// v2.1.0 (E2E_TRAINER_VERSION for another).
package workloadapi_test

import (
	"context"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

var (
	ctx = context.Background()
	k8s client.Client
)

func TestMain(m *testing.M) {
	o := localcluster.Options{}
	o.KubernetesVersion = localcluster.KubernetesWorkloadAPI
	os.Exit(localcluster.RunTests(m, "e2e-workload-api", o, nil, fixtures.Scheme(),
		func(_ *localcluster.Cluster, k client.Client) { k8s = k }))
}
