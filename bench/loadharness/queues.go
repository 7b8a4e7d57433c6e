package loadharness

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// WaitActive waits up to a minute for want ClusterQueues to be Active:
// jobs created before would wait for Kueue, not for what is measured.
func WaitActive(ctx context.Context, c client.Client, want int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		var cqs kueue.ClusterQueueList
		if err := c.List(ctx, &cqs); err != nil {
			return err
		}
		if n := Active(cqs.Items); n >= want {
			return nil
		} else if !time.Now().Before(deadline) {
			return fmt.Errorf("%d of %d ClusterQueues active after a minute", n, want)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Active counts the ClusterQueues whose Active condition is True.
func Active(cqs []kueue.ClusterQueue) int {
	n := 0
	for _, cq := range cqs {
		for _, cond := range cq.Status.Conditions {
			if cond.Type == kueue.ClusterQueueActive && cond.Status == metav1.ConditionTrue {
				n++
				break
			}
		}
	}
	return n
}
