package informercache

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// watchedWorkload is a Workload as the API server sends it: managedFields,
// a role's pod template, quantities, conditions.
func watchedWorkload(name string) *kueue.Workload {
	return &kueue.Workload{
		TypeMeta: metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "Workload"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "ns", UID: "u-1", ResourceVersion: "42", Generation: 1,
			Labels:      map[string]string{"kueue.x-k8s.io/job-uid": "u-0"},
			Finalizers:  []string{"kueue.x-k8s.io/resource-in-use"},
			Annotations: map[string]string{"note": "a line\nand \"quotes\""},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "trainjob-kueue", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "kueue.x-k8s.io/v1beta2",
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:queueName":{}}}`)},
			}},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "job", UID: "u-0", Controller: ptr.To(true)}},
		},
		Spec: kueue.WorkloadSpec{
			QueueName: "lq",
			PodSets: []kueue.PodSet{{
				Name: "node", Count: 4,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "node", Image: "pytorch", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m"), "nvidia.com/gpu": resource.MustParse("8")},
					}}},
					Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}},
				}},
			}},
		},
		Status: kueue.WorkloadStatus{
			Conditions: []metav1.Condition{{Type: "QuotaReserved", Status: metav1.ConditionFalse, Reason: "Pending", Message: "couldn't assign flavors", LastTransitionTime: metav1.Unix(1700000000, 0)}},
		},
	}
}

func watchedTrainJob() *trainjob.TrainJob {
	return &trainjob.TrainJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainjob.GroupVersion.String(), Kind: "TrainJob"},
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns", UID: "u-0", ResourceVersion: "41"},
		Spec: trainjob.Spec{
			RuntimeRef: trainer.RuntimeRef{Name: "torch"},
			Suspend:    ptr.To(true),
			RuntimePatches: []trainjob.RuntimePatch{{
				Manager:             "kueue.x-k8s.io/manager",
				TrainingRuntimeSpec: &runtime.RawExtension{Raw: []byte(`{"template":{"spec":{"replicatedJobs":[{"name":"node"}]}}}`)},
			}},
		},
		Status: trainjob.Status{JobsStatus: []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1)}}},
	}
}

// line is one watch event as the API server writes it.
func line(t testing.TB, typ watch.EventType, obj any) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{"type": typ, "object": obj})
	if err != nil {
		t.Fatal(err)
	}
	return append(data, '\n')
}

type decoded struct {
	Type   watch.EventType
	Object runtime.Object
}

// clientGoDecode decodes stream as client-go's watch does for a typed cache.
func clientGoDecode(t testing.TB, stream []byte, gv schema.GroupVersion) []decoded {
	t.Helper()
	ns := serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme.New())}
	objDec, ss, framer, err := runtime.NewClientNegotiator(ns, gv).StreamDecoder(runtime.ContentTypeJSON, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := restclientwatch.NewDecoder(streaming.NewDecoder(framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream))), ss), objDec)
	var out []decoded
	for {
		typ, obj, err := d.Decode()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, decoded{typ, obj})
	}
}

func onePassDecode(t testing.TB, stream []byte, newObject func() runtime.Object) ([]decoded, error) {
	t.Helper()
	d := newEventDecoder(io.NopCloser(bytes.NewReader(stream)), newObject)
	var out []decoded
	for {
		typ, obj, err := d.Decode()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, decoded{typ, obj})
	}
}

func TestOnePassDecodesWhatClientGoDecodes(t *testing.T) {
	big := watchedWorkload("big")
	// Longer than the reader's buffer: read in pieces.
	big.Annotations["big"] = strings.Repeat("x", 3*eventBuffer)
	bookmark := &kueue.Workload{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.SchemeGroupVersion.String(), Kind: "Workload"},
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: "50", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}},
	}
	expired := &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: "too old resource version: 1 (40)", Reason: metav1.StatusReasonExpired, Code: http.StatusGone,
	}
	for _, tc := range []struct {
		name      string
		gv        schema.GroupVersion
		newObject func() runtime.Object
		lines     [][]byte
	}{
		{
			name:      "workloads",
			gv:        kueue.SchemeGroupVersion,
			newObject: func() runtime.Object { return &kueue.Workload{} },
			lines: [][]byte{
				line(t, watch.Added, watchedWorkload("a")),
				line(t, watch.Modified, watchedWorkload("a")),
				line(t, watch.Modified, big),
				line(t, watch.Bookmark, bookmark),
				line(t, watch.Deleted, watchedWorkload("a")),
				line(t, watch.Error, expired),
			},
		},
		{
			name:      "trainjobs",
			gv:        trainjob.GroupVersion,
			newObject: func() runtime.Object { return &trainjob.TrainJob{} },
			lines: [][]byte{
				line(t, watch.Added, watchedTrainJob()),
				line(t, watch.Modified, watchedTrainJob()),
				line(t, watch.Error, expired),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream := bytes.Join(tc.lines, nil)
			want := clientGoDecode(t, stream, tc.gv)
			got, err := onePassDecode(t, stream, tc.newObject)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != len(tc.lines) {
				t.Fatalf("client-go decoded %d events of %d", len(want), len(tc.lines))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("one-pass events differ from client-go's (-client-go +one-pass):\n%s", diff)
			}
			last := got[len(got)-1].Object.(*metav1.Status)
			if !apierrors.IsResourceExpired(apierrors.FromObject(last)) {
				t.Errorf("the ERROR event's status is not read as an expired resource version: %+v", last)
			}
		})
	}
}

// The decoder reads the next event into the buffer that held the last one:
// nothing decoded may keep pointing into it.
func TestOnePassEventsOwnTheirBytes(t *testing.T) {
	first, second := watchedTrainJob(), watchedTrainJob()
	second.Spec.RuntimePatches[0].TrainingRuntimeSpec.Raw = []byte(`{"template":{"spec":{"replicatedJobs":[{"name":"zzzz"}]}}}`)
	d := newEventDecoder(io.NopCloser(bytes.NewReader(append(line(t, watch.Added, first), line(t, watch.Modified, second)...))),
		func() runtime.Object { return &trainjob.TrainJob{} })
	_, a, err := d.Decode()
	if err != nil {
		t.Fatal(err)
	}
	kept := string(a.(*trainjob.TrainJob).Spec.RuntimePatches[0].TrainingRuntimeSpec.Raw)
	if _, _, err := d.Decode(); err != nil {
		t.Fatal(err)
	}
	if got := string(a.(*trainjob.TrainJob).Spec.RuntimePatches[0].TrainingRuntimeSpec.Raw); got != kept {
		t.Errorf("the first event's runtime patch changed when the second was read: %s, was %s", got, kept)
	}
}

func TestOnePassBadStreams(t *testing.T) {
	wl := func() runtime.Object { return &kueue.Workload{} }
	for _, tc := range []struct {
		name    string
		stream  string
		want    error  // errors.Is
		wantMsg string // in the error
		events  int    // decoded before the error
	}{
		{name: "cut off inside an event", stream: string(line(t, watch.Added, watchedWorkload("a"))) + `{"type":"MODIFIED","object":{"metadata":`, want: io.ErrUnexpectedEOF, events: 1},
		{name: "blank lines between events", stream: "\n" + string(line(t, watch.Added, watchedWorkload("a"))) + "\n  \n", want: io.EOF, events: 1},
		{name: "unknown event type", stream: `{"type":"RENAMED","object":{}}` + "\n", wantMsg: "invalid watch event type: RENAMED"},
		{name: "object of the wrong shape", stream: `{"type":"MODIFIED","object":{"spec":"lq"}}` + "\n", wantMsg: "decoding the object of a MODIFIED watch event"},
		{name: "not JSON", stream: "<html>\n", wantMsg: "decoding a watch event"},
		{name: "an ERROR that is no Status", stream: `{"type":"ERROR","object":[1]}` + "\n", wantMsg: "decoding the status of an ERROR watch event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := onePassDecode(t, []byte(tc.stream), wl)
			if len(got) != tc.events {
				t.Errorf("decoded %d events before the end, want %d", len(got), tc.events)
			}
			switch {
			case tc.want == io.EOF:
				if err != nil {
					t.Errorf("err = %v, want a clean end", err)
				}
			case tc.want != nil:
				if !errors.Is(err, tc.want) {
					t.Errorf("err = %v, want %v", err, tc.want)
				}
			case err == nil || !strings.Contains(err.Error(), tc.wantMsg):
				t.Errorf("err = %v, want one saying %q", err, tc.wantMsg)
			}
		})
	}
}

func TestOnePassWatchesRefuseANarrowedCache(t *testing.T) {
	sel := labels.SelectorFromSet(labels.Set{"a": "b"})
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	for _, tc := range []struct {
		name string
		opts cache.Options
		ok   bool
	}{
		{name: "whole cache", opts: cache.Options{}, ok: true},
		{name: "another kind narrowed", opts: cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: sel}}}, ok: true},
		{name: "default namespaces", opts: cache.Options{DefaultNamespaces: map[string]cache.Config{"ns": {}}}},
		{name: "default label selector", opts: cache.Options{DefaultLabelSelector: sel}},
		{name: "the watched kind narrowed", opts: cache.Options{ByObject: map[client.Object]cache.ByObject{&kueue.Workload{}: {Label: sel}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := Watches(tc.opts, cfg, http.DefaultClient, scheme.New(), &kueue.Workload{}, &trainjob.TrainJob{})
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok = %v", err, tc.ok)
			}
			if tc.ok && opts.NewInformer == nil {
				t.Error("no informer constructor installed")
			}
		})
	}
}

// BenchmarkWatchDecode decodes a stream of Workload watch events as
// client-go would and in one pass.
func BenchmarkWatchDecode(b *testing.B) {
	var stream []byte
	const events = 100
	for range events {
		stream = append(stream, line(b, watch.Modified, watchedWorkload("a"))...)
	}
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			clientGoDecode(b, stream, kueue.SchemeGroupVersion)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
	})
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := onePassDecode(b, stream, func() runtime.Object { return &kueue.Workload{} }); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
	})
}
