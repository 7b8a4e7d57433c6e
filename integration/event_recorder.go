package integration

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
)

// eventComponent names us in the events we record.
const eventComponent = "trainjob-kueue"

// NewEventRecorder records events as core/v1 Events through client-go's
// record broadcaster, whose correlator remembers recent events in LRU
// caches of a fixed size (aggregating repeats, dropping spam per object).
//
// The events.k8s.io broadcaster the manager offers keeps every event it sent
// for 6 to 12 minutes to build series, 1.1 KB each: a burst of 10,000 new
// TrainJobs (one CreatedWorkload event each) held 11 MB for those minutes,
// twice that in RSS at Go's default GC target. Both APIs store the same
// Events: kubectl describe shows them alike.
func NewEventRecorder(mgr ctrl.Manager) (events.EventRecorder, error) {
	cs, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("a client for events: %w", err)
	}
	r, b := newCoreEvents(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")}, mgr.GetScheme())
	if err := mgr.Add(shutdown{b}); err != nil {
		return nil, err
	}
	return r, nil
}

// eventsConfig is cfg speaking protobuf, as the API server does for Events
// (a built-in kind): each job gets four or five events (its Workload made,
// the start, what we injected, its end), and encoding them and decoding
// the API server's answers as JSON was half their cost, 3 % of the
// manager's CPU in a burst (docs/benchmark.md). controller-runtime's client
// already speaks protobuf for built-in kinds; CRDs have only JSON.
func eventsConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return cfg
}

func newCoreEvents(sink record.EventSink, scheme *runtime.Scheme) (coreEvents, record.EventBroadcaster) {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(sink)
	return coreEvents{b.NewRecorder(scheme, corev1.EventSource{Component: eventComponent})}, b
}

// coreEvents is an events.EventRecorder over a core/v1 recorder. A core/v1
// Event has no action and no related object: the reason and the note say
// what happened.
type coreEvents struct{ r record.EventRecorder }

func (c coreEvents) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	c.r.Eventf(regarding, eventtype, reason, note, args...)
}

// shutdown flushes and stops the broadcaster when the manager stops, on
// every replica (webhooks record too).
type shutdown struct{ b record.EventBroadcaster }

func (s shutdown) Start(ctx context.Context) error {
	<-ctx.Done()
	s.b.Shutdown()
	return nil
}

func (shutdown) NeedLeaderElection() bool { return false }
