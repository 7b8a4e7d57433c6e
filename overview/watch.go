package overview

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Watching is a reader for `list --watch -A`: informers that list each
// kind once, then follow its changes, so each listing after the first
// reads memory, not the API server (ten thousand Workloads were listed
// again every tick). The kinds list and the forecast read are watched
// from the start, and Watching fails when they have not synced within
// syncWithin (a user who may list but not watch): the caller lists every
// tick instead. Of pods only a JobSet's are watched (the running ones
// counted); managed fields are dropped. It serves until ctx ends.
func Watching(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, syncWithin time.Duration) (client.Reader, error) {
	hasJobSet, err := labels.NewRequirement(jobsetapi.JobSetNameKey, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(cfg, cache.Options{
		Scheme:           scheme,
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: labels.NewSelector().Add(*hasJobSet)}},
	})
	if err != nil {
		return nil, fmt.Errorf("watching the cluster: %w", err)
	}
	// Fetch counts running pods by a field selector: the cache answers it
	// from an index.
	if err := c.IndexField(ctx, &corev1.Pod{}, "status.phase", func(o client.Object) []string {
		return []string{string(o.(*corev1.Pod).Status.Phase)}
	}); err != nil {
		return nil, fmt.Errorf("indexing pods by phase: %w", err)
	}
	for _, o := range []client.Object{&trainjob.TrainJob{}, &kueue.Workload{}, &kueue.LocalQueue{}, &corev1.Pod{}, &kueue.ClusterQueue{}, &kueue.ResourceFlavor{}} {
		if _, err := c.GetInformer(ctx, o, cache.BlockUntilSynced(false)); err != nil {
			return nil, fmt.Errorf("watching %T: %w", o, err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	syncCtx, cancel := context.WithTimeout(ctx, syncWithin)
	defer cancel()
	if !c.WaitForCacheSync(syncCtx) {
		return nil, fmt.Errorf("the watches of TrainJobs, Workloads, LocalQueues, pods, ClusterQueues and ResourceFlavors did not sync within %s (may you watch them?)", syncWithin)
	}
	return whole{c}, nil
}

// whole lists from the cache whole, as one page: controller-runtime's
// cache pages nothing (a limit cuts its answer short, a continue token is
// refused) yet marks every answer "continue-not-supported", which a
// listing through paging would ask for next.
type whole struct{ client.Reader }

func (w whole) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	o.Limit, o.Continue = 0, ""
	if err := w.Reader.List(ctx, list, o); err != nil {
		return err
	}
	list.SetContinue("")
	return nil
}
