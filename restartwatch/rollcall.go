package restartwatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// RollCallLease names the Lease the replicas answer the roll call on,
// beside the turn's.
const RollCallLease = names.RollCallLease

// rollCallFresh: an answer younger than this says its replica is ready.
// Replicas answer every RollCallEvery.
const (
	RollCallEvery = 10 * time.Second
	rollCallFresh = 3 * RollCallEvery
	// rollCallForgotten: older answers are removed (a replica gone for
	// good leaves one behind).
	rollCallForgotten = 10 * time.Minute
)

// RollCall tells a replica about to restart for a mode change whether
// another one is ready to take the webhook calls while it drains. Each
// ready replica answers (Answer) every RollCallEvery, its identity and the
// time in an annotation of one Lease; one that is alone does not drain:
// its webhook server answers through its restart (the process's, not the
// run's), where draining would leave a Service without a ready endpoint
// for the drain and the restart.
type RollCall struct {
	Client    client.Client
	Namespace string
	// Identity names this process, as the turn's.
	Identity string
	Now      func() time.Time
}

// Answer says this replica is ready now, and forgets answers too old to
// matter. The Update carries the resourceVersion read: a conflict is
// another replica's answer, and the next roll call answers again.
func (r *RollCall) Answer(ctx context.Context) error {
	return r.edit(ctx, func(a map[string]string) { a[r.key()] = r.Now().UTC().Format(time.RFC3339Nano) })
}

// key is this replica's annotation: an identity (a pod name and a UUID)
// may be longer than an annotation's name may be.
func (r *RollCall) key() string {
	sum := sha256.Sum256([]byte(r.Identity))
	return rollCallPrefix + hex.EncodeToString(sum[:8])
}

// rollCallPrefix starts every answer's annotation.
const rollCallPrefix = "ready.trainjob-kueue.dev/"

// Leave takes this replica's answer back: it drains or stops.
func (r *RollCall) Leave(ctx context.Context) error {
	return r.edit(ctx, func(a map[string]string) { delete(a, r.key()) })
}

// OtherReady: another replica answered the roll call lately.
func (r *RollCall) OtherReady(ctx context.Context) (bool, error) {
	lease := &coordinationv1.Lease{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: RollCallLease}, lease); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	for key, at := range lease.Annotations {
		if strings.HasPrefix(key, rollCallPrefix) && key != r.key() && answeredWithin(at, r.Now(), rollCallFresh) {
			return true, nil
		}
	}
	return false, nil
}

func (r *RollCall) edit(ctx context.Context, change func(map[string]string)) error {
	lease := &coordinationv1.Lease{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: RollCallLease}, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: RollCallLease, Annotations: map[string]string{}}}
		change(lease.Annotations)
		err = r.Client.Create(ctx, lease)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return wrapRollCall(err)
	}
	if err != nil {
		return wrapRollCall(err)
	}
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	for key, at := range lease.Annotations {
		if strings.HasPrefix(key, rollCallPrefix) && !answeredWithin(at, r.Now(), rollCallForgotten) {
			delete(lease.Annotations, key)
		}
	}
	change(lease.Annotations)
	if err := r.Client.Update(ctx, lease); err != nil && !apierrors.IsConflict(err) {
		return wrapRollCall(err)
	}
	return nil
}

func wrapRollCall(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("the replicas' roll call (Lease %s): %w", RollCallLease, err)
}

// answeredWithin: at is a time no older than d before now.
func answeredWithin(at string, now time.Time, d time.Duration) bool {
	t, err := time.Parse(time.RFC3339Nano, at)
	return err == nil && now.Sub(t) < d
}
