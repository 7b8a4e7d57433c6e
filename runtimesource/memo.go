package runtimesource

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// podSetMemoBytes bounds the memo's estimated size. Jobs of one runtime and
// one spec shape share one projection, so thousands of queued jobs hold a
// handful of projections plus a small entry each (entryOverhead).
const podSetMemoBytes = 32 << 20

// entryOverhead estimates a memo entry without its projection: the key,
// the list element, the map slot.
const entryOverhead = 256

// podSetMemo remembers projections by job UID, spec generation and runtime
// version. A queued job is reconciled on every status change of its
// Workload while its PodSets change only with its spec or its runtime;
// computing them (with the Workload CRD's defaults) was a tenth of the
// manager's CPU under load. A restart just computes them again.
//
// It holds one entry per job (a newer key of the job replaces the older),
// forgets a job when it is deleted, and evicts the least recently used
// entries past maxBytes. Equal projections are stored once: the estimate
// counts each distinct projection once, by its JSON size.
type podSetMemo struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	// lru holds *memoEntry, most recently used first.
	lru    *list.List
	byJob  map[types.UID]*list.Element
	shared map[[sha256.Size]byte]*sharedProjection
}

type memoEntry struct {
	uid types.UID
	key string
	p   *sharedProjection
	// snapshot is the runtime Trainer v2.3 snapshotted for the job, once
	// read: it outlives the job's spec generations, since Trainer never
	// takes another while it holds one (a snapshot deleted by hand and
	// taken again is read after the entry goes, at the latest on restart:
	// we watch no ConfigMaps). Shared with the snapshot decoder, read-only,
	// and not counted in maxBytes: one per runtime version its jobs were
	// snapshotted from.
	snapshot *trainer.TrainingRuntimeSpec
}

type sharedProjection struct {
	p    Projection
	sum  [sha256.Size]byte
	size int
	refs int
}

func newPodSetMemo(maxBytes int) *podSetMemo {
	return &podSetMemo{maxBytes: maxBytes, lru: list.New(), byJob: map[types.UID]*list.Element{}, shared: map[[sha256.Size]byte]*sharedProjection{}}
}

// uidOf the job a memo key is about: keys start with the job's UID.
func uidOf(key string) types.UID {
	uid, _, _ := strings.Cut(key, "/")
	return types.UID(uid)
}

func (m *podSetMemo) get(key string) (Projection, bool) {
	if m == nil {
		return Projection{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.byJob[uidOf(key)]
	if !ok {
		return Projection{}, false
	}
	e := el.Value.(*memoEntry)
	if e.key != key {
		return Projection{}, false
	}
	m.lru.MoveToFront(el)
	return e.p.p, true
}

func (m *podSetMemo) put(key string, p Projection) {
	if m == nil {
		return
	}
	// Outside the lock: the encoding is the expensive part.
	data, err := json.Marshal(struct {
		Ref          Ref
		Roles        []podsets.Role
		PodSets      []kueue.PodSet
		Coscheduling *trainer.CoschedulingPodGroupPolicySource
	}{p.Ref, p.Roles, p.PodSets, p.Coscheduling})
	if err != nil {
		// Only maps, slices and API types, which always encode: a failure
		// here is a bug, and the projection is simply not shared.
		panic(fmt.Sprintf("encoding a projection for the memo: %v", err))
	}
	sum := sha256.Sum256(data)
	m.mu.Lock()
	defer m.mu.Unlock()
	uid := uidOf(key)
	var snapshot *trainer.TrainingRuntimeSpec
	if el, ok := m.byJob[uid]; ok {
		snapshot = el.Value.(*memoEntry).snapshot
		m.remove(el)
	}
	sp, ok := m.shared[sum]
	if !ok {
		sp = &sharedProjection{p: p, sum: sum, size: len(data)}
		m.shared[sum] = sp
		m.bytes += sp.size
	}
	sp.refs++
	m.byJob[uid] = m.lru.PushFront(&memoEntry{uid: uid, key: key, p: sp, snapshot: snapshot})
	m.bytes += entryOverhead + len(key)
	for m.bytes > m.maxBytes && m.lru.Len() > 1 {
		m.remove(m.lru.Back())
	}
}

// snapshotOf the job uid, if read before and its entry is still held.
func (m *podSetMemo) snapshotOf(uid types.UID) *trainer.TrainingRuntimeSpec {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byJob[uid]; ok {
		return el.Value.(*memoEntry).snapshot
	}
	return nil
}

// projectedFromOther: the memo holds a projection of job uid from a
// version of its runtime other than version (keys end in it).
func (m *podSetMemo) projectedFromOther(uid types.UID, version string) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.byJob[uid]
	return ok && !strings.HasSuffix(el.Value.(*memoEntry).key, "/"+version)
}

// rememberSnapshot of job uid with its entry; a job with no entry (evicted
// at once) reads it again next time.
func (m *podSetMemo) rememberSnapshot(uid types.UID, rt *trainer.TrainingRuntimeSpec) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byJob[uid]; ok {
		el.Value.(*memoEntry).snapshot = rt
	}
}

// forget drops what is remembered about job uid.
func (m *podSetMemo) forget(uid types.UID) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byJob[uid]; ok {
		m.remove(el)
	}
}

// remove an entry; the caller holds mu.
func (m *podSetMemo) remove(el *list.Element) {
	e := m.lru.Remove(el).(*memoEntry)
	delete(m.byJob, e.uid)
	m.bytes -= entryOverhead + len(e.key)
	e.p.refs--
	if e.p.refs == 0 {
		delete(m.shared, e.p.sum)
		m.bytes -= e.p.size
	}
}

// onDelete forgets a deleted TrainJob: its UID never comes back, so its
// entry would only wait for eviction.
func (m *podSetMemo) onDelete(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if o, ok := obj.(metav1.Object); ok {
		m.forget(o.GetUID())
	}
}

// pruneOnDelete registers onDelete with the TrainJob informer of c.
func (m *podSetMemo) pruneOnDelete(c cache.Cache) error {
	inf, err := c.GetInformer(context.Background(), &trainjob.TrainJob{})
	if err != nil {
		return fmt.Errorf("watching TrainJob deletions for the PodSet memo: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: m.onDelete})
	return err
}
