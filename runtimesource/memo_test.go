package runtimesource

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// projectionOf one role whose image is image: distinct images, distinct
// projections.
func projectionOf(image string) Projection {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: image}}}}
	return Projection{
		Roles:   []podsets.Role{{Name: "node", Replicas: 1, PodsPerReplica: 2, Template: tmpl}},
		PodSets: []kueue.PodSet{{Name: "node", Count: 2, Template: tmpl}},
	}
}

func key(uid string, generation int) string { return fmt.Sprintf("%s/%d/rt-1", uid, generation) }

func TestPodSetMemoStaysWithinItsBytesEvictingTheLeastRecentlyUsed(t *testing.T) {
	one := newPodSetMemo(1 << 30)
	one.put(key("a", 1), projectionOf("image-a"))
	perJob := one.bytes
	m := newPodSetMemo(3 * perJob)
	for i := range 3 {
		m.put(key(fmt.Sprint(i), 1), projectionOf(fmt.Sprint("image-", i)))
	}
	// Job 0 is used again, so job 1 is now the least recently used.
	if _, ok := m.get(key("0", 1)); !ok {
		t.Fatal("job 0 forgotten within the bound")
	}
	m.put(key("3", 1), projectionOf("image-3"))
	if m.bytes > m.maxBytes {
		t.Errorf("%d bytes held, bound %d", m.bytes, m.maxBytes)
	}
	for job, want := range map[string]bool{"0": true, "1": false, "2": true, "3": true} {
		if _, ok := m.get(key(job, 1)); ok != want {
			t.Errorf("job %s remembered: %v, want %v", job, ok, want)
		}
	}
}

func TestPodSetMemoStoresEqualProjectionsOnce(t *testing.T) {
	m := newPodSetMemo(1 << 30)
	for i := range 1000 {
		m.put(key(fmt.Sprint(i), 1), projectionOf("the-same-image"))
	}
	if len(m.shared) != 1 {
		t.Fatalf("%d projections stored for 1000 equal ones", len(m.shared))
	}
	first, _ := m.get(key("0", 1))
	last, _ := m.get(key("999", 1))
	if &first.PodSets[0] != &last.PodSets[0] {
		t.Error("equal projections are separate copies")
	}
	if perJob := m.bytes / 1000; perJob > 2*entryOverhead {
		t.Errorf("%d bytes per job of a shared projection", perJob)
	}
}

// Equal pods from two runtimes are two projections: each names the
// runtime its job's messages name.
func TestPodSetMemoSharesNoProjectionAcrossRuntimes(t *testing.T) {
	m := newPodSetMemo(1 << 30)
	a, b := projectionOf("the-same-image"), projectionOf("the-same-image")
	a.Ref = Ref{Kind: kindClusterTrainingRuntime, Name: "torch"}
	b.Ref = Ref{Kind: kindTrainingRuntime, Namespace: "team", Name: "torch"}
	m.put(key("a", 1), a)
	m.put(key("b", 1), b)
	for job, want := range map[string]Ref{"a": a.Ref, "b": b.Ref} {
		got, _ := m.get(key(job, 1))
		if got.Ref != want {
			t.Errorf("job %s's projection names %v, want %v", job, got.Ref, want)
		}
	}
}

func TestPodSetMemoKeepsOneEntryPerJob(t *testing.T) {
	m := newPodSetMemo(1 << 30)
	m.put(key("a", 1), projectionOf("v1"))
	m.put(key("a", 2), projectionOf("v2"))
	if _, ok := m.get(key("a", 1)); ok {
		t.Error("the projection of an older generation is still served")
	}
	if p, ok := m.get(key("a", 2)); !ok || p.PodSets[0].Template.Spec.Containers[0].Image != "v2" {
		t.Errorf("generation 2: %v, %v", p.PodSets, ok)
	}
	if m.lru.Len() != 1 || len(m.shared) != 1 {
		t.Errorf("%d entries and %d projections for one job", m.lru.Len(), len(m.shared))
	}
}

func TestPodSetMemoForgetsDeletedJobs(t *testing.T) {
	m := newPodSetMemo(1 << 30)
	job := func(uid string) *trainjob.TrainJob {
		return &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
	}
	m.put(key("a", 1), projectionOf("x"))
	m.put(key("b", 1), projectionOf("y"))
	m.onDelete(job("a"))
	// A delete the informer missed arrives as a tombstone.
	m.onDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/b", Obj: job("b")})
	for _, uid := range []string{"a", "b"} {
		if _, ok := m.get(key(uid, 1)); ok {
			t.Errorf("deleted job %s still remembered", uid)
		}
	}
	if m.bytes != 0 || len(m.shared) != 0 || m.lru.Len() != 0 {
		t.Errorf("after every job was deleted: %d bytes, %d projections, %d entries", m.bytes, len(m.shared), m.lru.Len())
	}
	var none *podSetMemo
	if _, ok := none.get("a"); ok {
		t.Fatal("a nil memo remembers nothing")
	}
	none.put("a", Projection{})
	none.forget("a")
}

// BenchmarkPodSetMemo is a queued job's reconcile against the memo: a hit,
// and (every 100th) a new generation of a job whose projection equals
// others'.
func BenchmarkPodSetMemo(b *testing.B) {
	m := newPodSetMemo(podSetMemoBytes)
	p := projectionOf("image")
	const jobs = 10000
	for i := range jobs {
		m.put(key(fmt.Sprint(i), 1), p)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		job := fmt.Sprint(i % jobs)
		if i%100 == 0 {
			m.put(key(job, 1), p)
		}
		if _, ok := m.get(key(job, 1)); !ok {
			b.Fatal("miss")
		}
		i++
	}
}
