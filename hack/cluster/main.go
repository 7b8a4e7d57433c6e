// Command cluster brings the local control plane up and down; the Makefile's
// cluster-up and cluster-down targets call it.
//
//	go run ./hack/cluster up   [-name local] [-trainer-version v2.1.0] [-kueue-version v0.19.2] [-integration ours|intree] [-kueue-config FILE] [-dra] [-provisioning]
//	go run ./hack/cluster down [-name local|all]
//	go run ./hack/cluster switch [-name local] -integration ours|intree   (live, no job restarted)
//	go run ./hack/cluster multikueue [-trainer-version v2.1.0] [-kueue-version v0.19.2] [-integration ours|intree]   (clusters mk-manager, mk-worker1, mk-worker2)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cluster up|down [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	name := fs.String("name", "local", "cluster name; state in .cluster/NAME")
	trainer := fs.String("trainer-version", localcluster.DefaultTrainerVersion, "Kubeflow Trainer release")
	kueueVersion := fs.String("kueue-version", localcluster.DefaultKueueVersion, "Kueue release (v0.19.2 or v0.16.2)")
	integ := fs.String("integration", localcluster.IntegrationOurs, "ours (trainjob-kueue) or intree (Kueue's built-in TrainJob integration)")
	kueueConfig := fs.String("kueue-config", "", "Kueue Configuration replacing config/kueue/controller_manager_config.yaml")
	kueueGates := fs.String("kueue-feature-gates", "", "Kueue feature gates over its Configuration's, e.g. PriorityBoost=true")
	multiKueue := fs.String("multikueue", "", "\"manager\" for the manager cluster of a MultiKueue set-up")
	dra := fs.Bool("dra", false, "Dynamic Resource Allocation with a fake GPU driver (DeviceClass gpu.example.com, counted by Kueue as example.com/gpu)")
	replicas := fs.Int("replicas", 1, "trainjob-kueue replicas: 2 runs a second one (leader election on) behind a loopback Service, as a Deployment's")
	kubernetes := fs.String("kubernetes-version", localcluster.DefaultKubernetesVersion, "Kubernetes release of the control plane: "+localcluster.KubernetesCoscheduling+" (scheduler-plugins' coscheduling) or "+localcluster.KubernetesWorkloadAPI+" (Kubernetes' Workload API, GenericWorkload on)")
	provisioning := fs.Bool("provisioning", false, "ProvisioningRequests (Kueue's provisioning admission check) with a fake provisioner standing in for cluster-autoscaler (hack/fakeprovisioner)")
	_ = fs.Parse(os.Args[2:])
	root, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch os.Args[1] {
	case "up":
		_, err = localcluster.Up(ctx, localcluster.Options{
			Name: *name, Root: root, Progress: os.Stdout, KueueConfigFile: *kueueConfig,
			Settings: localcluster.Settings{KubernetesVersion: *kubernetes, TrainerVersion: *trainer, KueueVersion: *kueueVersion, Integration: *integ, MultiKueue: *multiKueue, KueueFeatureGates: *kueueGates, DRA: *dra, Provisioning: *provisioning, OursReplicas: *replicas},
		})
	case "multikueue":
		err = upMultiKueue(ctx, root, localcluster.Settings{KubernetesVersion: *kubernetes, TrainerVersion: *trainer, KueueVersion: *kueueVersion, Integration: *integ, OursReplicas: *replicas})
	case "down":
		err = localcluster.Down(root, *name, os.Stdout)
	case "switch":
		err = switchIntegration(ctx, root, *name, *integ)
	default:
		err = fmt.Errorf("unknown command %q: up, down, switch or multikueue", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

// switchIntegration switches a running cluster's TrainJobs to another
// integration, live (localcluster.Cluster.Switch).
func switchIntegration(ctx context.Context, root, name, to string) error {
	c, err := localcluster.Existing(root, name)
	if err != nil {
		return err
	}
	if err := c.Switch(ctx, root, to, os.Stdout); err != nil {
		return err
	}
	fmt.Printf("cluster %q runs TrainJobs with %s now; export KUBECONFIG=%s\n", name, to, c.Kubeconfig)
	return nil
}

// upMultiKueue brings up a manager and two workers with the same settings
// and connects them. Switch the whole set-up with switch -name mk-manager.
func upMultiKueue(ctx context.Context, root string, settings localcluster.Settings) error {
	manager, _, err := localcluster.UpMultiKueue(ctx, root, []string{"mk-manager", "mk-worker1", "mk-worker2"}, os.Stdout,
		func(bool) localcluster.Settings { return settings })
	if err != nil {
		return err
	}
	fmt.Printf("MultiKueue is up: ClusterQueues on the manager that list the AdmissionCheck %q dispatch to mk-worker1 and mk-worker2.\nexport KUBECONFIG=%s\n", localcluster.MultiKueueCheck, manager.Kubeconfig)
	return nil
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "cluster: %v\n", err)
	os.Exit(1)
}
