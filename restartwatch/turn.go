package restartwatch

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// TurnLease names the Lease the replicas take turns with for a mode
// change, beside the leader election's.
const TurnLease = names.ModeChangeLease

// turnHold: how long a turn is held at most unrenewed: when its holder
// never comes back serving (it crashed while restarting, and stopped
// renewing), the next replica takes it then.
const turnHold = 2 * time.Minute

// Turn makes the replicas restart for a mode change one at a time: a
// replica takes the turn before it drains, and gives it back only once it
// serves again in the new mode. Every replica serves the webhooks, so the
// other one answers them meanwhile (failurePolicy Fail: with both gone at
// once, TrainJob creates and Kueue's own starts and stops fail).
type Turn struct {
	Client    client.Client
	Namespace string
	// Identity names this process (stable across its in-process restarts).
	Identity string
	// Every is how often a replica waiting for its turn looks again.
	Every time.Duration
	Now   func() time.Time
}

// Take waits until this replica holds the turn (or ctx is done).
func (t *Turn) Take(ctx context.Context) error {
	for {
		took, err := t.tryTake(ctx)
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("taking the turn to restart (Lease %s/%s): %w", t.Namespace, TurnLease, err)
		}
		if took {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(t.Every):
		}
	}
}

func (t *Turn) tryTake(ctx context.Context) (bool, error) {
	lease := &coordinationv1.Lease{}
	err := t.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: TurnLease}, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: TurnLease}}
		t.hold(lease)
		return true, t.Client.Create(ctx, lease)
	}
	if err != nil {
		return false, err
	}
	if !Free(lease, t.Identity, t.Now()) {
		return false, nil
	}
	t.hold(lease)
	// The Update carries the resourceVersion read: of two replicas that
	// saw the turn free, one takes it and the other gets a conflict.
	return true, t.Client.Update(ctx, lease)
}

func (t *Turn) hold(lease *coordinationv1.Lease) {
	now := metav1.NewMicroTime(t.Now())
	lease.Spec.HolderIdentity = ptr.To(t.Identity)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(turnHold / time.Second))
	lease.Spec.AcquireTime, lease.Spec.RenewTime = &now, &now
}

// Renew keeps the turn held by this replica from running out while its
// restart takes longer than the hold (a large cache to sync): only a
// holder that stopped renewing, one that crashed, loses it. Holding it
// not, it does nothing.
func (t *Turn) Renew(ctx context.Context) error {
	lease := &coordinationv1.Lease{}
	if err := t.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: TurnLease}, lease); err != nil {
		return client.IgnoreNotFound(err)
	}
	if ptr.Deref(lease.Spec.HolderIdentity, "") != t.Identity {
		return nil
	}
	lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(t.Now()))
	if err := t.Client.Update(ctx, lease); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("renewing the turn to restart (Lease %s/%s): %w", t.Namespace, TurnLease, err)
	}
	return nil
}

// renewEvery is how often a holder renews the turn: well within turnHold.
const renewEvery = turnHold / 4

// RenewEvery is how often a holder renews the turn (Renew).
func (t *Turn) RenewEvery() time.Duration { return renewEvery }

// Give gives the turn back if this replica holds it: it serves again.
func (t *Turn) Give(ctx context.Context) error {
	lease := &coordinationv1.Lease{}
	if err := t.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: TurnLease}, lease); err != nil {
		return client.IgnoreNotFound(err)
	}
	if ptr.Deref(lease.Spec.HolderIdentity, "") != t.Identity {
		return nil
	}
	lease.Spec.HolderIdentity = nil
	if err := t.Client.Update(ctx, lease); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("giving back the turn to restart (Lease %s/%s): %w", t.Namespace, TurnLease, err)
	}
	return nil
}

// Free: the turn may be taken by identity now: nobody holds it, identity
// does already, or its holder's time ran out.
func Free(lease *coordinationv1.Lease, identity string, now time.Time) bool {
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if holder == "" || holder == identity || lease.Spec.RenewTime == nil {
		return true
	}
	until := lease.Spec.RenewTime.Add(time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)) * time.Second)
	return !now.Before(until)
}
