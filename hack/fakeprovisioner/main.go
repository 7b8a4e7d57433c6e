// Command fakeprovisioner stands in for cluster-autoscaler's
// ProvisioningRequest support (or a cloud's queued provisioning) on the
// local cluster, for make cluster-up PROVISIONING=true: every
// autoscaling.x-k8s.io/v1 ProvisioningRequest, such as Kueue's provisioning
// admission check creates for a Workload, is Accepted at once and, after a
// delay, Provisioned — or Failed, as its parameters ask (a
// ProvisioningRequestConfig's spec.parameters reach its requests):
//
//	outcome: Provisioned (default) | Failed
//	delay:   how long the capacity takes to come, a Go duration (default 3s)
//
// It adds no node: the kwok nodes the cluster has are the capacity.
//
//	fakeprovisioner -kubeconfig FILE
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Parameters a request may carry.
const (
	OutcomeParameter = "outcome"
	DelayParameter   = "delay"
	// Failed is the outcome that fails a request.
	Failed = "Failed"
)

// defaultDelay: long enough for a test to see a job wait on its request.
const defaultDelay = 3 * time.Second

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the cluster's kubeconfig")
	every := flag.Duration("every", 500*time.Millisecond, "how often requests are looked at")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := autoscaling.AddToScheme(scheme); err != nil {
		log.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Printf("provisioning every ProvisioningRequest (parameters %s, %s)", OutcomeParameter, DelayParameter)
	t := time.NewTicker(*every)
	defer t.Stop()
	for {
		if err := pass(ctx, c, time.Now()); err != nil && ctx.Err() == nil {
			log.Print(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pass brings every request to what Decide says.
func pass(ctx context.Context, c client.Client, now time.Time) error {
	var prs autoscaling.ProvisioningRequestList
	if err := c.List(ctx, &prs); err != nil {
		return fmt.Errorf("listing ProvisioningRequests: %w", err)
	}
	for i := range prs.Items {
		pr := &prs.Items[i]
		conds := Decide(pr, now)
		if conds == nil {
			continue
		}
		for _, cond := range conds {
			apimeta.SetStatusCondition(&pr.Status.Conditions, cond)
		}
		if err := c.Status().Update(ctx, pr); err != nil {
			log.Printf("ProvisioningRequest %s/%s: %v", pr.Namespace, pr.Name, err)
			continue
		}
		log.Printf("ProvisioningRequest %s/%s (class %s): %s", pr.Namespace, pr.Name, pr.Spec.ProvisioningClassName, conds[len(conds)-1].Type)
	}
	return nil
}

// Decide is what a request's status must gain now: Accepted when it has
// no condition yet; Provisioned, or Failed, once its delay has passed
// since its creation; nil when it has all it will get. A delay that does
// not parse fails the request, naming the parameter.
func Decide(pr *autoscaling.ProvisioningRequest, now time.Time) []metav1.Condition {
	if apimeta.IsStatusConditionTrue(pr.Status.Conditions, autoscaling.Provisioned) || apimeta.IsStatusConditionTrue(pr.Status.Conditions, autoscaling.Failed) {
		return nil
	}
	cond := func(t, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: pr.Generation, LastTransitionTime: metav1.NewTime(now)}
	}
	var out []metav1.Condition
	if apimeta.FindStatusCondition(pr.Status.Conditions, autoscaling.Accepted) == nil {
		out = append(out, cond(autoscaling.Accepted, "Accepted", "the fake provisioner took the request"))
	}
	delay := defaultDelay
	if d, ok := pr.Spec.Parameters[DelayParameter]; ok {
		parsed, err := time.ParseDuration(string(d))
		if err != nil {
			return append(out, cond(autoscaling.Failed, "BadParameter", fmt.Sprintf("parameter %s=%q is not a Go duration (e.g. 5s)", DelayParameter, d)))
		}
		delay = parsed
	}
	if now.Before(pr.CreationTimestamp.Add(delay)) {
		return out
	}
	if pr.Spec.Parameters[OutcomeParameter] == Failed {
		return append(out, cond(autoscaling.Failed, "FakeFailure", "the fake provisioner fails requests whose parameter outcome is Failed"))
	}
	return append(out, cond(autoscaling.Provisioned, "Provisioned", "the fake provisioner provides the capacity: the kwok nodes the cluster has"))
}
