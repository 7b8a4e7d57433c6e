package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestCoreEventsSayWhatTheFrameworkSays(t *testing.T) {
	fake := record.NewFakeRecorder(1)
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	coreEvents{fake}.Eventf(job, nil, corev1.EventTypeWarning, ReasonInvalidRuntime, actionComputePodSets, "role %s: %d pods", "node", 3)
	if got, want := <-fake.Events, "Warning InvalidRuntime role node: 3 pods"; got != want {
		t.Errorf("recorded %q, want %q", got, want)
	}
}

// What a recorder keeps per event sent, after a burst of jobs one event
// each (the job framework's CreatedWorkload): the core/v1 broadcaster's
// LRU caches are bounded (a bigger burst keeps less per event), the
// events.k8s.io one's series cache keeps every event 6 to 12 minutes.
func BenchmarkEventsRetainedBytes(b *testing.B) {
	for _, rc := range []struct {
		name string
		make func(ctx context.Context) events.EventRecorder
	}{
		{"core/v1 (ours)", func(ctx context.Context) events.EventRecorder {
			r, br := newCoreEvents(nopCoreSink{}, scheme.New())
			context.AfterFunc(ctx, br.Shutdown)
			return r
		}},
		{"events.k8s.io/v1 (the manager's)", func(ctx context.Context) events.EventRecorder {
			br := events.NewBroadcaster(nopEventsSink{})
			br.StartRecordingToSinkWithContext(ctx)
			return br.NewRecorder(scheme.New(), eventComponent)
		}},
	} {
		for _, burst := range []int{5000, 20000} {
			b.Run(fmt.Sprintf("%s/%d events", rc.name, burst), func(b *testing.B) {
				var total float64
				for b.Loop() {
					ctx, cancel := context.WithCancel(b.Context())
					r := rc.make(ctx)
					runtime.GC()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					for i := range burst {
						job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "scale", Name: fmt.Sprintf("job-%05d", i), UID: types.UID(fmt.Sprintf("93a87776-85e3-435c-9704-%012d", i))}}
						r.Eventf(job, nil, corev1.EventTypeNormal, "CreatedWorkload", "CreateWorkload", "Created Workload: scale/trainjob-job-%05d-b867e", i)
					}
					// Both send from goroutines of their own.
					time.Sleep(time.Second)
					runtime.GC()
					runtime.ReadMemStats(&after)
					total += float64(after.HeapAlloc) - float64(before.HeapAlloc)
					runtime.KeepAlive(r)
					cancel()
				}
				b.ReportMetric(total/float64(b.N)/float64(burst), "B/event")
			})
		}
	}
}

type nopCoreSink struct{}

func (nopCoreSink) Create(e *corev1.Event) (*corev1.Event, error)          { return e, nil }
func (nopCoreSink) Update(e *corev1.Event) (*corev1.Event, error)          { return e, nil }
func (nopCoreSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) { return e, nil }
func (nopEventsSink) Create(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return e, nil
}
func (nopEventsSink) Update(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return e, nil
}
func (nopEventsSink) Patch(_ context.Context, e *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	return e, nil
}

type nopEventsSink struct{}

// Events reach the API server as protobuf, the cheaper encoding it speaks
// for them, and its answers are read whichever of the two it sends.
func TestEventsAreSentAsProtobuf(t *testing.T) {
	got := make(chan *corev1.Event, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != apiruntime.ContentTypeProtobuf {
			t.Errorf("an event sent as %q, want %q", ct, apiruntime.ContentTypeProtobuf)
		}
		body, _ := io.ReadAll(r.Body)
		ev := &corev1.Event{}
		codec := serializer.NewCodecFactory(clientgoscheme.Scheme).UniversalDeserializer()
		if _, _, err := codec.Decode(body, nil, ev); err != nil {
			t.Errorf("decoding the event: %v", err)
		}
		w.Header().Set("Content-Type", apiruntime.ContentTypeJSON)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(ev)
		got <- ev
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(eventsConfig(&rest.Config{Host: srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	r, b := newCoreEvents(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")}, scheme.New())
	defer b.Shutdown()
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	r.Eventf(job, nil, corev1.EventTypeNormal, "Started", "Start", "started")
	select {
	case ev := <-got:
		if ev.Reason != "Started" || ev.InvolvedObject.Name != "a" {
			t.Errorf("the API server got %s about %s, want Started about a", ev.Reason, ev.InvolvedObject.Name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event reached the API server")
	}
}
