package restartwatch

import (
	"context"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

func TestATurnIsFreeWhenNobodyOrItsHolderRanOut(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	held := func(holder string, renewed time.Duration) *coordinationv1.Lease {
		l := &coordinationv1.Lease{}
		l.Spec.HolderIdentity = ptr.To(holder)
		l.Spec.LeaseDurationSeconds = ptr.To(int32(120))
		l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(now.Add(-renewed)))
		return l
	}
	for name, tc := range map[string]struct {
		lease *coordinationv1.Lease
		want  bool
	}{
		"given back":                    {lease: &coordinationv1.Lease{}, want: true},
		"held by us (restarted)":        {lease: held("a", time.Second), want: true},
		"held by the other replica":     {lease: held("b", time.Second)},
		"the other's time ran out":      {lease: held("b", 2*time.Minute), want: true},
		"the other's time almost spent": {lease: held("b", 119*time.Second)},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Free(tc.lease, "a", now); got != tc.want {
				t.Errorf("Free = %v, want %v", got, tc.want)
			}
		})
	}
}

// Two replicas that see the mode change at once restart one after the
// other: the second takes the turn only once the first gives it back
// (serving again).
func TestTwoReplicasTakeTheTurnOneAtATime(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	turn := func(id string) *Turn {
		return &Turn{Client: c, Namespace: "ns", Identity: id, Every: 5 * time.Millisecond, Now: time.Now}
	}
	a, b := turn("a"), turn("b")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := a.Take(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	bTook := false
	done := make(chan error, 1)
	go func() {
		err := b.Take(ctx)
		mu.Lock()
		bTook = true
		mu.Unlock()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	if bTook {
		t.Fatal("b took the turn while a held it: both replicas would restart at once")
	}
	mu.Unlock()
	// b giving back a turn it does not hold changes nothing.
	if err := b.Give(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Give(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: TurnLease}, lease); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(lease.Spec.HolderIdentity, ""); got != "b" {
		t.Errorf("the turn is held by %q, want b", got)
	}
}

// A replica waiting for its turn stops waiting when it is told to stop.
func TestWaitingForTheTurnEndsWithTheContext(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	a := &Turn{Client: c, Namespace: "ns", Identity: "a", Every: time.Millisecond, Now: time.Now}
	b := &Turn{Client: c, Namespace: "ns", Identity: "b", Every: time.Millisecond, Now: time.Now}
	if err := a.Take(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := b.Take(ctx); err == nil {
		t.Error("took a turn another replica holds")
	}
}

// A restart that takes longer than the hold keeps its turn while it
// renews it: the other replica waits. One that stops renewing (it
// crashed) loses it once the hold runs out, and renewing a turn it does
// not hold changes nothing.
func TestARenewedTurnOutlastsItsHold(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	a := &Turn{Client: c, Namespace: "ns", Identity: "a", Every: time.Millisecond, Now: clock}
	b := &Turn{Client: c, Namespace: "ns", Identity: "b", Every: time.Millisecond, Now: clock}
	if err := a.Take(t.Context()); err != nil {
		t.Fatal(err)
	}
	bTakes := func() bool {
		took, err := b.tryTake(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return took
	}
	for range 8 { // two holds long, renewed as a restart renews it
		now = now.Add(a.RenewEvery())
		if err := a.Renew(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := b.Renew(t.Context()); err != nil {
			t.Fatal(err)
		}
		if bTakes() {
			t.Fatalf("b took a turn a renews")
		}
	}
	now = now.Add(turnHold)
	if !bTakes() {
		t.Error("b did not take the turn a stopped renewing a hold ago")
	}
}
