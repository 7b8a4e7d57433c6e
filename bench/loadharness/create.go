package loadharness

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateRetrying creates obj (a copy: a failed create leaves it as it
// was), retrying up to ten times, each wait 200 ms longer, what a loaded
// control plane answers with a transient error (webhook timeouts,
// throttling). An object already there is done: a retried create whose
// first try took.
func CreateRetrying(ctx context.Context, c client.Client, obj client.Object) error {
	var err error
	for attempt := range 10 {
		if err = c.Create(ctx, obj.DeepCopyObject().(client.Object)); err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	return err
}
