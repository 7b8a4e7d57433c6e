package localcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// AddNode creates a kwok-managed node (annotation kwok.x-k8s.io/node: fake)
// with the capacity in n.Status, and waits until kwok reports it Ready.
func AddNode(ctx context.Context, c client.Client, n *corev1.Node) error {
	status := n.Status.DeepCopy()
	if err := c.Create(ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating node %s: %w", n.Name, err)
	}
	// The API server drops status on create; kwok and the node controller
	// write the node meanwhile, so retry on conflicts.
	if err := poll.UntilDone(ctx, 30*time.Second, func() error {
		got := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(n), got); err != nil {
			return err
		}
		got.Status.Capacity, got.Status.Allocatable = status.Capacity, status.Allocatable
		return c.Status().Update(ctx, got)
	}); err != nil {
		return fmt.Errorf("setting the capacity of node %s: %w", n.Name, err)
	}
	return poll.UntilDone(ctx, time.Minute, func() error {
		got := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(n), got); err != nil {
			return err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node %s not Ready", n.Name)
	})
}
