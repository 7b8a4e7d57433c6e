package integration

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// priorities records the priority of each request added.
type priorities struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	got map[reconcile.Request]int
}

func (p *priorities) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	for _, r := range items {
		p.got[r] = ptr.Deref(o.Priority, 0)
	}
}
func (p *priorities) Add(r reconcile.Request) { p.AddWithOpts(priorityqueue.AddOpts{}, r) }
func (p *priorities) GetWithPriority() (reconcile.Request, int, bool) {
	return reconcile.Request{}, 0, true
}

// Whatever way a handler adds to the urgent lane, the request goes at
// decisionPriority at least; a higher priority is kept.
func TestUrgentAddsAtTheDecisionPriorityAtLeast(t *testing.T) {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "j"}}
	for name, tc := range map[string]struct {
		add  func(u ahead)
		want int
	}{
		"Add":               {add: func(u ahead) { u.Add(req) }, want: decisionPriority},
		"AddAfter":          {add: func(u ahead) { u.AddAfter(req, time.Second) }, want: decisionPriority},
		"AddRateLimited":    {add: func(u ahead) { u.AddRateLimited(req) }, want: decisionPriority},
		"a lower priority":  {add: func(u ahead) { u.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(1)}, req) }, want: decisionPriority},
		"a higher priority": {add: func(u ahead) { u.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(50)}, req) }, want: 50},
	} {
		t.Run(name, func(t *testing.T) {
			p := &priorities{got: map[reconcile.Request]int{}}
			tc.add(urgent(p))
			if got, ok := p.got[req]; !ok || got != tc.want {
				t.Errorf("added at %d (added: %v), want %d", got, ok, tc.want)
			}
		})
	}
}
