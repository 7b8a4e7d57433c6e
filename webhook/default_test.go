package webhook

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A queued job is suspended and, on Trainer v2.2+, given the empty runtime
// patch Kueue's own webhook gives it, so Kueue's built-in integration can
// still start it after a switch back; a job out of Kueue is left alone.
func TestDefaultSuspendsAQueuedJobAndKeepsItRunnableByKueuesIntegration(t *testing.T) {
	v23 := shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{RuntimeSnapshot: true}}
	for name, tc := range map[string]struct {
		shape       shape.Shape
		queue       string
		standby     bool
		wantSuspend bool
		wantPatches []string
	}{
		// Kueue's own webhook adds its patch, unconditionally: a second
		// one of ours would be a duplicate key whenever Kueue's webhook
		// is called after ours.
		"queued, Trainer v2.3, standing by for Kueue's built-in integration": {shape: v23, queue: "lq", standby: true, wantSuspend: true},
		"queued, Trainer v2.3":     {shape: v23, queue: "lq", wantSuspend: true, wantPatches: []string{names.InTreeRuntimePatchManager}},
		"not queued, Trainer v2.3": {shape: v23},
		"queued, Trainer v2.1":     {shape: shape.PodTemplateOverrides{}, queue: "lq", wantSuspend: true},
	} {
		t.Run(name, func(t *testing.T) {
			opts := settings.Shared{Shape: tc.shape}
			opts.BuiltInTrainJob = tc.standby
			w := &Webhook{client: fake.NewClientBuilder().WithScheme(scheme.New()).Build(), opts: opts}
			job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j"}}
			job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
			if tc.queue != "" {
				job.Labels = map[string]string{"kueue.x-k8s.io/queue-name": tc.queue}
			}
			if err := w.Default(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			if got := job.Spec.Suspend != nil && *job.Spec.Suspend; got != tc.wantSuspend {
				t.Errorf("suspend = %v, want %v", got, tc.wantSuspend)
			}
			var managers []string
			for _, p := range job.Spec.RuntimePatches {
				managers = append(managers, p.Manager)
			}
			if len(managers) != len(tc.wantPatches) || len(managers) > 0 && managers[0] != tc.wantPatches[0] {
				t.Errorf("runtime patches of %v, want %v", managers, tc.wantPatches)
			}
		})
	}
}

// A LocalQueue named default created a moment before the job (one kubectl
// apply of both) may not be in the informer cache yet: the job still goes
// to it, read from the API server, instead of staying unqueued for good.
// A job that names its queue costs no such read: Kueue's helper asks
// before it looks at the label, and the read would be one per create.
func TestADefaultQueueTheCacheHasNotSeenYetStillQueuesTheJob(t *testing.T) {
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: string(constants.DefaultLocalQueueName)}}
	for name, tc := range map[string]struct {
		cached, live []client.Object
		queue        string
		want         string
		wantReads    int
	}{
		"in the cache":                  {cached: []client.Object{lq}, live: []client.Object{lq}, want: "default"},
		"created, not yet in the cache": {live: []client.Object{lq}, want: "default", wantReads: 1},
		"none":                          {wantReads: 1},
		"none, the job names its queue": {queue: "lq", want: "lq"},
	} {
		t.Run(name, func(t *testing.T) {
			opts := settings.Shared{Shape: shape.PodTemplateOverrides{}}
			opts.LocalQueueDefaulting = true
			reads := 0
			live := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tc.live...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					reads++
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build()
			w := &Webhook{
				client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tc.cached...).Build(),
				live:   live,
				opts:   opts,
			}
			job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j"}}
			job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
			if tc.queue != "" {
				job.Labels = map[string]string{constants.QueueLabel: tc.queue}
			}
			if err := w.Default(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			if got := job.Labels[constants.QueueLabel]; got != tc.want {
				t.Errorf("queue %q, want %q", got, tc.want)
			}
			if reads != tc.wantReads {
				t.Errorf("%d reads from the API server, want %d", reads, tc.wantReads)
			}
		})
	}
}
