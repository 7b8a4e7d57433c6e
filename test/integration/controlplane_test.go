package integration_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// freePort is a loopback port for a component's webhook server, chosen where
// no outbound connection can take it before the component binds it.
func freePort() (int, error) { return localcluster.FreePort() }

// waitForWebhook waits until a webhook server accepts TLS connections.
func waitForWebhook(ctx context.Context, port int) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("webhook server on port %d did not start", port)
}

func createAll(ctx context.Context, c client.Client, objs []client.Object) error {
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}
