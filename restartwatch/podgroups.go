package restartwatch

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
)

// PodGroupsChanged says why the manager must restart when scheduler-
// plugins' PodGroup CRD is now installed (installed) and it was not when
// the manager started (serving), or the other way round; "" when it is as
// served. Gang mode coscheduling is served as learned at start: a job
// admitted under it while the CRD was missing waits (GangUnsupported),
// and starts once a restart serves the mode.
func PodGroupsChanged(installed, serving bool) string {
	switch {
	case installed && !serving:
		return fmt.Sprintf("scheduler-plugins' PodGroup CRD %s was installed: restarting to serve gang mode coscheduling", discovery.PodGroupCRD)
	case !installed && serving:
		return fmt.Sprintf("scheduler-plugins' PodGroup CRD %s was removed: restarting without gang mode coscheduling", discovery.PodGroupCRD)
	}
	return ""
}

// podGroupsWatch stops the manager when the PodGroup CRD comes or goes.
type podGroupsWatch struct {
	client  client.Reader
	serving bool
	stop    func(error)
}

func (w *podGroupsWatch) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	crd := newCRD()
	err := w.client.Get(ctx, req.NamespacedName, crd)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	if why := PodGroupsChanged(err == nil && crd.DeletionTimestamp == nil, w.serving); why != "" {
		w.stop(fmt.Errorf("%s", why))
	}
	return ctrl.Result{}, nil
}

// WatchPodGroups calls stop when scheduler-plugins' PodGroup CRD is
// installed or removed after the manager learned whether it is (serving).
//
// The manager's cache holds one CRD, the TrainJob's (informercache: the
// others are megabytes apiece), so a watch of it never sees the PodGroup
// CRD, and a read of it there finds none: the watch keeps a cache of its
// own, of that one CRD's metadata.
func WatchPodGroups(mgr ctrl.Manager, serving bool, stop func(error)) error {
	crds, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{
			&apiextensionsv1.CustomResourceDefinition{}: {Field: fields.OneTermEqualSelector("metadata.name", discovery.PodGroupCRD)},
		},
	})
	if err != nil {
		return fmt.Errorf("making the cache of the PodGroup CRD: %w", err)
	}
	if err := mgr.Add(crds); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("podgroup-crd").
		WatchesRawSource(source.Kind(crds, newCRD(), &handler.TypedEnqueueRequestForObject[*metav1.PartialObjectMetadata]{})).
		Complete(&podGroupsWatch{client: crds, serving: serving, stop: stop})
}

// newCRD is an empty CRD to read the metadata of.
func newCRD() *metav1.PartialObjectMetadata {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return crd
}
