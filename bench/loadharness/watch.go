package loadharness

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Handlers are what a harness watches: for each kind (an empty object of
// it), the handler called with every object of it added or updated.
type Handlers map[client.Object]func(obj any)

// Watch starts informers on the kinds of h in namespace ns and returns once
// they have synced; they stop with ctx. Managed fields are stripped: no
// harness reads them, and with thousands of jobs they are most of what the
// informers would keep.
func Watch(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, ns string, h Handlers) error {
	ca, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{ns: {}},
		DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return err
	}
	for obj, f := range h {
		inf, err := ca.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("informer on %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: f, UpdateFunc: func(_, obj any) { f(obj) }}); err != nil {
			return err
		}
	}
	go func() { _ = ca.Start(ctx) }()
	if !ca.WaitForCacheSync(ctx) {
		return fmt.Errorf("informers did not sync")
	}
	return nil
}
