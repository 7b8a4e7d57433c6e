package priorityboost

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/saidonce"
)

// Warner tells a ClusterQueue's owner when its preemption-cost policy does
// nothing: it can't be read, or Kueue ignores priority boosts. Once per
// policy value: a ClusterQueue's status changes often, its policy seldom.
type Warner struct {
	client   client.Reader
	recorder events.EventRecorder
	gateOn   bool
	said     *saidonce.Memory
}

// NewWarner makes a Warner.
func NewWarner(c client.Reader, recorder events.EventRecorder, gateOn bool) *Warner {
	return &Warner{client: c, recorder: recorder, gateOn: gateOn, said: saidonce.New()}
}

// Reconcile implements reconcile.Reconciler.
func (w *Warner) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cq := &kueue.ClusterQueue{}
	if err := w.client.Get(ctx, req.NamespacedName, cq); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	reason, msg := preemptcost.Inactive(cq, w.gateOn)
	if reason != "" && w.said.First(cq.UID, cq.Annotations[names.PreemptionCostAnnotation]) {
		w.recorder.Eventf(cq, nil, corev1.EventTypeWarning, reason, "PriorityBoost", "%s", msg)
	}
	return ctrl.Result{}, nil
}
