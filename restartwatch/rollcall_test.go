package restartwatch

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// A replica about to restart learns whether another is ready: one that
// answered the roll call within three roll calls is; its own answer, an
// old one, or one taken back (it drains) is not. Answers a day old are
// forgotten, and an identity longer than an annotation name may be still
// answers.
func TestTheRollCallSaysWhetherAnotherReplicaIsReady(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	long := strings.Repeat("trainjob-kueue-controller-manager-7d9f8b6c5d-", 2) + "x7k2p_0b6c1a3e-4d5f-4a6b-9c7d-8e9f0a1b2c3d"
	a := &RollCall{Client: c, Namespace: "ns", Identity: long, Now: clock}
	b := &RollCall{Client: c, Namespace: "ns", Identity: "b_1", Now: clock}
	other := func(r *RollCall) bool {
		ok, err := r.OtherReady(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if other(a) {
		t.Fatal("no roll call yet: another replica ready")
	}
	if err := a.Answer(t.Context()); err != nil {
		t.Fatal(err)
	}
	if other(a) {
		t.Error("a's own answer counted as another replica's")
	}
	if !other(b) {
		t.Error("b does not see a, which just answered")
	}
	now = now.Add(rollCallFresh)
	if other(b) {
		t.Error("a's answer three roll calls old still counts")
	}
	if err := a.Answer(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := a.Leave(t.Context()); err != nil {
		t.Fatal(err)
	}
	if other(b) {
		t.Error("a took its answer back (it drains) and still counts")
	}
	if err := b.Answer(t.Context()); err != nil {
		t.Fatal(err)
	}
	now = now.Add(24 * time.Hour)
	if err := a.Answer(t.Context()); err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: RollCallLease}, lease); err != nil {
		t.Fatal(err)
	}
	if len(lease.Annotations) != 1 {
		t.Errorf("answers kept: %v, want a's alone (b's a day old)", lease.Annotations)
	}
}
