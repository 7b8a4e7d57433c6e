package restartwatch

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

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
	crd := &apiextensionsv1.CustomResourceDefinition{}
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
func WatchPodGroups(mgr ctrl.Manager, serving bool, stop func(error)) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("podgroup-crd").
		For(&apiextensionsv1.CustomResourceDefinition{}, builder.WithPredicates(
			predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == discovery.PodGroupCRD }))).
		Complete(&podGroupsWatch{client: mgr.GetClient(), serving: serving, stop: stop})
}
