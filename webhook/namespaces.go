package webhook

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// namespacesLive is the webhook's cached client, but for a Namespace the
// cache has not seen: that is asked of the API server. A job is often
// created a moment after its namespace (one kubectl apply of both, a
// test's fixture), and Kueue's helpers the webhook calls
// (ApplyDefaultLocalQueueWithManagedJobsNamespaceSelector,
// WorkloadShouldBeSuspended) read the namespace for
// managedJobsNamespaceSelector and refuse the create when it is not found:
// seen under load, "Namespace … not found" for a job in a namespace made
// seconds before. A namespace that exists is in the cache: no extra read.
type namespacesLive struct {
	client.Client
	live client.Reader
}

// Get implements client.Reader.
func (n namespacesLive) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := n.Client.Get(ctx, key, obj, opts...)
	if _, ns := obj.(*corev1.Namespace); ns && apierrors.IsNotFound(err) && n.live != nil {
		return n.live.Get(ctx, key, obj, opts...)
	}
	return err
}
