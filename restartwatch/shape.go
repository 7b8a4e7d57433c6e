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
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// ShapeChanged tells whether the installed TrainJob CRD now asks for another
// shape than the one we serve: after an in-place Trainer upgrade we must not
// keep writing a field the API server prunes.
func ShapeChanged(crd *apiextensionsv1.CustomResourceDefinition, serving shape.Shape) error {
	now, err := discovery.DetectShape(crd)
	if err != nil {
		return err
	}
	if now.Name() != serving.Name() || now.Rules() != serving.Rules() {
		return fmt.Errorf("the TrainJob CRD changed from %s %+v to %s %+v (Trainer was upgraded in place): restarting to serve it", serving.Name(), serving.Rules(), now.Name(), now.Rules())
	}
	return nil
}

// shapeWatch stops the manager when the TrainJob CRD changes shape; the
// Deployment restarts us and we detect the new one.
type shapeWatch struct {
	client  client.Reader
	serving shape.Shape
	stop    func(error)
}

func (w *shapeWatch) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := w.client.Get(ctx, req.NamespacedName, crd); err != nil {
		if client.IgnoreNotFound(err) == nil {
			w.stop(fmt.Errorf("the TrainJob CRD %s was deleted (Trainer uninstalled?)", discovery.TrainJobCRD))
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := ShapeChanged(crd, w.serving); err != nil {
		w.stop(err)
	}
	return ctrl.Result{}, nil
}

// WatchShape calls stop when the TrainJob CRD no longer matches the shape
// we serve.
func WatchShape(mgr ctrl.Manager, serving shape.Shape, stop func(error)) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("trainjob-crd").
		For(&apiextensionsv1.CustomResourceDefinition{}, builder.WithPredicates(
			predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == discovery.TrainJobCRD }),
			predicate.GenerationChangedPredicate{})).
		Complete(&shapeWatch{client: mgr.GetClient(), serving: serving, stop: stop})
}
