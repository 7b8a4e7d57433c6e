package webhook

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
)

// The pod webhook reads a gang pod's PodGroup at each of the gang's pods:
// live, a 1,000-pod gang costs 1,000 reads on the pod create path, under
// the client's rate limit, and its last creates run past the webhook's
// timeout. The informer cache answers instead, but only to accept: a
// group the cache holds as the pod's TrainJob's, for its wave, is what a
// live read a moment earlier would have said (a group deleted or replaced
// since is the race a live read has too: the API server keeps a group its
// pods name). Anything else — not synced yet, not held, held as another's
// — is read live before the pod is refused or let through: a cache that
// lags never refuses a pod, and never lets a forger in.

// groupCache holds PodGroups' metadata (nil: none; every read is live).
type groupCache interface {
	// group is PodGroup key as the cache holds it, or false when it holds
	// none or has not synced the kind yet.
	group(ctx context.Context, key client.ObjectKey) (*metav1.PartialObjectMetadata, bool)
}

// informerGroups is the manager's informer cache: the same watch the
// reconciler keeps of its groups (integration/reconciler.go), started on
// this replica by its first read if it is not the leader.
type informerGroups struct{ cache cache.Cache }

func (g informerGroups) group(ctx context.Context, key client.ObjectKey) (*metav1.PartialObjectMetadata, bool) {
	pg := newWorkloadAPIGroup()
	inf, err := g.cache.GetInformer(ctx, pg, cache.BlockUntilSynced(false))
	if err != nil || !inf.HasSynced() {
		return nil, false
	}
	if err := g.cache.Get(ctx, key, pg); err != nil {
		return nil, false
	}
	return pg, true
}

// cachedMember: the cache holds group (of the pod's namespace) as one a
// pod of the TrainJob whose UID is jobUID, of role, may join.
func (l lineage) cachedMember(ctx context.Context, namespace, group string, jobUID types.UID, role string) bool {
	if l.groups == nil {
		return false
	}
	pg, ok := l.groups.group(ctx, client.ObjectKey{Namespace: namespace, Name: group})
	return ok && gang.WorkloadAPIGroupFor(pg, jobUID, role) == nil
}

// newWorkloadAPIGroup is an empty PodGroup (scheduling.k8s.io/v1beta1) to read
// the metadata of.
func newWorkloadAPIGroup() *metav1.PartialObjectMetadata {
	pg := &metav1.PartialObjectMetadata{}
	pg.SetGroupVersionKind(gang.WorkloadAPIGroupGVK)
	return pg
}
