package informercache

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/json"
)

// Watches makes the cache decode the watch events of objs' kinds in
// one pass over each event. Under load, decoding watch events is the largest
// part of the manager's CPU: every status write to a TrainJob or Workload,
// Kueue's and Trainer's too, reaches it as a whole object. client-go reads
// each event about five times (the JSON framer scans it twice; the event
// and then the object inside it are each sniffed for their kind with
// encoding/json and then decoded). The API server writes each event as
// one line of compact JSON, and the informer knows the kind it watches, so
// one line is decoded straight into the typed object, as the same decoder
// (case-sensitive, integers kept) client-go uses would decode it.
//
// Lists, and every other kind, stay client-go's. A kind whose cache is
// narrowed by namespace or selector is refused: its watch would not be.
func Watches(opts cache.Options, cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, objs ...client.Object) (cache.Options, error) {
	if opts.NewInformer != nil {
		return opts, errors.New("one-pass watches: the cache already has its own informers")
	}
	if len(opts.DefaultNamespaces) > 0 || opts.DefaultLabelSelector != nil || opts.DefaultFieldSelector != nil {
		return opts, errors.New("one-pass watches: the cache is narrowed by namespace or selector, which they would not be")
	}
	narrowed := map[reflect.Type]bool{}
	for obj, by := range opts.ByObject {
		if by.Label != nil || by.Field != nil || len(by.Namespaces) > 0 {
			narrowed[reflect.TypeOf(obj)] = true
		}
	}
	// Watches are not rate limited (client-go's Request.Watch skips the
	// limiter): a watch restarted behind a burst of writes would leave the
	// cache stale for as long as the burst lasts.
	wcfg := rest.CopyConfig(cfg)
	wcfg.ContentType, wcfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	wcfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	codecs := serializer.NewCodecFactory(scheme)
	kinds := map[reflect.Type]*onePassKind{}
	for _, obj := range objs {
		t := reflect.TypeOf(obj)
		if narrowed[t] {
			return opts, fmt.Errorf("one-pass watches: the cache of %T is narrowed by namespace or selector, which its watch would not be", obj)
		}
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return opts, err
		}
		rc, err := apiutil.RESTClientForGVK(gvk, true, false, wcfg, codecs, httpClient)
		if err != nil {
			return opts, fmt.Errorf("one-pass watches of %s: %w", gvk.Kind, err)
		}
		// Both kinds here have regular plurals (workloads, trainjobs); the
		// integration tier watches them through a real API server.
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		elem := t.Elem()
		kinds[t] = &onePassKind{
			rest:      rc,
			resource:  plural.Resource,
			newObject: func() runtime.Object { return reflect.New(elem).Interface().(runtime.Object) },
		}
	}
	opts.NewInformer = func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if k := kinds[reflect.TypeOf(obj)]; k != nil {
			lw = &toolscache.ListWatch{
				ListWithContextFunc:  toolscache.ToListerWithContext(lw).ListWithContext,
				WatchFuncWithContext: k.watch,
			}
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
	return opts, nil
}

// onePassKind watches one kind cluster-wide.
type onePassKind struct {
	rest      rest.Interface
	resource  string
	newObject func() runtime.Object
}

func (k *onePassKind) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	body, err := k.rest.Get().Resource(k.resource).VersionedParams(&opts, metav1.ParameterCodec).Stream(ctx)
	if err != nil {
		return nil, err
	}
	return watch.NewStreamWatcherWithLogger(klog.FromContext(ctx),
		newEventDecoder(body, k.newObject),
		// As client-go's own watch reports an event it cannot decode.
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, http.MethodGet, "ClientWatchDecoding"),
	), nil
}

// eventDecoder reads a watch stream of JSON events, one per line.
type eventDecoder struct {
	body      io.ReadCloser
	lines     *bufio.Reader
	newObject func() runtime.Object
	// long holds an event longer than the reader's buffer.
	long []byte
}

// eventBuffer fits a Workload of many roles with its managedFields.
const eventBuffer = 64 << 10

func newEventDecoder(body io.ReadCloser, newObject func() runtime.Object) *eventDecoder {
	return &eventDecoder{body: body, lines: bufio.NewReaderSize(body, eventBuffer), newObject: newObject}
}

// wireEvent is a watch event as the API server writes it, its object decoded
// in place.
type wireEvent struct {
	Type   watch.EventType `json:"type"`
	Object runtime.Object  `json:"object"`
}

func (d *eventDecoder) Decode() (watch.EventType, runtime.Object, error) {
	line, err := d.line()
	if err != nil {
		return "", nil, err
	}
	ev := wireEvent{Object: d.newObject()}
	err = json.UnmarshalCaseSensitivePreserveInts(line, &ev)
	if ev.Type == watch.Error || err != nil {
		return d.decodeOther(line, err)
	}
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %v", ev.Type)
	}
	// As client-go's decoder leaves typed objects: the kind is the cache's.
	ev.Object.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return ev.Type, ev.Object, nil
}

// decodeOther decodes an event that is not one of the watched kind: the
// API server's error (a Status, such as 410 Gone for an expired resource
// version), or a line that is not an event.
func (d *eventDecoder) decodeOther(line []byte, typedErr error) (watch.EventType, runtime.Object, error) {
	var ev metav1.WatchEvent
	if err := json.UnmarshalCaseSensitivePreserveInts(line, &ev); err != nil {
		return "", nil, fmt.Errorf("decoding a watch event: %w", err)
	}
	if ev.Type != string(watch.Error) {
		return "", nil, fmt.Errorf("decoding the object of a %s watch event: %w", ev.Type, typedErr)
	}
	status := &metav1.Status{}
	if err := json.UnmarshalCaseSensitivePreserveInts(ev.Object.Raw, status); err != nil {
		return "", nil, fmt.Errorf("decoding the status of an ERROR watch event: %w", err)
	}
	status.SetGroupVersionKind(schema.GroupVersionKind{})
	return watch.Error, status, nil
}

// line returns the next whole line. A stream that ends inside a line was
// cut off, which the stream watcher takes as a quiet end, as it does
// client-go's.
func (d *eventDecoder) line() ([]byte, error) {
	line, err := d.lines.ReadSlice('\n')
	for err == nil && len(bytes.TrimSpace(line)) == 0 {
		line, err = d.lines.ReadSlice('\n')
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		d.long = append(d.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = d.lines.ReadSlice('\n')
			d.long = append(d.long, line...)
		}
		line = d.long
	}
	switch {
	case err == nil:
		return line, nil
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0:
		return nil, io.ErrUnexpectedEOF
	default:
		return nil, err
	}
}

func (d *eventDecoder) Close() { _ = d.body.Close() }
