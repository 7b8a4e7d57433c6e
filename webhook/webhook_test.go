package webhook

import (
	"context"
	"errors"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// What the webhook refuses at create, and what it answers when it can't
// read what it needs: each refusal names the field and the way out.
func TestWebhookValidateCreate(t *testing.T) {
	const ns = "team"
	rt := func(cpu string) *trainer.TrainingRuntime {
		r := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torch"}}
		r.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
		r.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "x",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
		return r
	}
	job := func(edit func(*trainjob.TrainJob)) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", Labels: map[string]string{"kueue.x-k8s.io/queue-name": "lq"}}}
		j.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
		if edit != nil {
			edit(j)
		}
		return j
	}
	managed := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kueue": "yes"}}}
	cases := map[string]struct {
		job     *trainjob.TrainJob
		objs    []client.Object
		failGet bool
		denied  string // a substring of the denial; "" admits
		err     string // an error, not a denial
	}{
		"a plain job":           {job: job(nil), objs: []client.Object{rt("1"), managed}},
		"a runtime yet to come": {job: job(nil), objs: []client.Object{managed}},
		"an unknown gang mode": {job: job(func(j *trainjob.TrainJob) {
			j.Annotations = map[string]string{names.GangSchedulingAnnotation: "volcano"}
		}), objs: []client.Object{rt("1"), managed}, denied: names.GangSchedulingAnnotation},
		"a gang mode the cluster does not serve": {job: job(func(j *trainjob.TrainJob) {
			j.Annotations = map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling}
		}), objs: []client.Object{rt("1"), managed}, denied: "podgroups.scheduling.x-k8s.io"},
		"a gang timeout in minutes": {job: job(func(j *trainjob.TrainJob) {
			j.Annotations = map[string]string{names.GangScheduleTimeoutAnnotation: "2m"}
		}), objs: []client.Object{rt("1"), managed}, denied: "whole number of seconds"},
		"a negative request": {job: job(nil), objs: []client.Object{rt("-1"), managed}, denied: "Kueue cannot queue this TrainJob"},
		"a runtime kind Trainer does not have": {
			job: job(func(j *trainjob.TrainJob) { j.Spec.RuntimeRef.Kind = ptr.To("JobSet") }), objs: []client.Object{managed}, denied: "spec.runtimeRef.kind",
		},
		"a forged entry of ours": {
			job: job(func(j *trainjob.TrainJob) {
				j.Spec.PodTemplateOverrides = []trainjob.PodTemplateOverride{{TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}},
					Metadata: &metav1.ObjectMeta{Labels: map[string]string{names.OwnedLabel: "true"}}}}
			}),
			objs: []client.Object{rt("1"), managed}, denied: "written by trainjob-kueue at admission",
		},
		"a queue in a namespace Kueue does not manage": {
			job: job(nil), objs: []client.Object{rt("1"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}}, denied: "is not managed by Kueue",
		},
		"the runtime can't be read": {job: job(nil), objs: []client.Object{managed}, failGet: true, err: "reading TrainingRuntime team/torch"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tc.objs...)
			if tc.failGet {
				b = b.WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*trainer.TrainingRuntime); ok {
						return errors.New("cache not synced")
					}
					return c.Get(ctx, key, obj, opts...)
				}})
			}
			s := shape.PodTemplateOverrides{}
			c := b.Build()
			m := metrics.NewMetrics()
			reg := prometheus.NewPedanticRegistry()
			if err := m.Register(reg, c); err != nil {
				t.Fatal(err)
			}
			w := &Webhook{client: c, opts: settings.Shared{
				Shape:         s,
				PodSets:       podsets.Options{},
				KueueSettings: discovery.KueueSettings{ManagedJobsNamespaceSelector: labels.SelectorFromSet(labels.Set{"kueue": "yes"})},
				Metrics:       m,
			}}
			_, err := w.ValidateCreate(t.Context(), tc.job)
			// Every denial is counted for the dashboard; an error is no denial.
			counted, gerr := testutil.GatherAndCount(reg, "trainjob_kueue_webhook_refusals_total")
			if gerr != nil {
				t.Fatal(gerr)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.denied != ""]; counted != want {
				t.Errorf("%d refusals counted, want %d", counted, want)
			}
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("got %v, want an error saying %q", err, tc.err)
				}
			case tc.denied != "":
				if err == nil || !strings.Contains(err.Error(), tc.denied) {
					t.Errorf("got %v, want a denial saying %q", err, tc.denied)
				}
			case err != nil:
				t.Errorf("denied: %v", err)
			}
		})
	}
}

// Edits a queued job can't take from anyone but trainjob-kueue.
func TestWebhookValidateUpdate(t *testing.T) {
	const ns, us = "team", "system:serviceaccount:trainjob-kueue-system:trainjob-kueue"
	queued := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", Labels: map[string]string{"kueue.x-k8s.io/queue-name": "lq"}}}
	queued.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	queued.Spec.Suspend = ptr.To(true)
	edit := func(f func(*trainjob.TrainJob)) *trainjob.TrainJob {
		j := queued.DeepCopy()
		f(j)
		return j
	}
	unsuspend := func(j *trainjob.TrainJob) { j.Spec.Suspend = ptr.To(false) }
	oldGang := func(j *trainjob.TrainJob) {
		j.Annotations = map[string]string{names.GangSchedulingAnnotation: "volcano"}
	}
	inTreeEntry := func(j *trainjob.TrainJob) {
		j.Spec.PodTemplateOverrides = append(j.Spec.PodTemplateOverrides, trainjob.PodTemplateOverride{
			TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}},
			Metadata:   &metav1.ObjectMeta{Labels: map[string]string{names.InTreePodSetLabel: "node"}},
		})
	}
	v23 := shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{RuntimeSnapshot: true}}
	cases := map[string]struct {
		shape  shape.Shape
		user   string
		old    *trainjob.TrainJob // queued when nil
		job    *trainjob.TrainJob
		denied string
		// standby: Kueue runs its built-in TrainJob integration.
		standby bool
	}{
		"a user starts a queued job":            {user: "alice", job: edit(unsuspend), denied: "spec.suspend"},
		"trainjob-kueue starts it on admission": {user: us, job: edit(unsuspend)},
		"a user takes it out of Kueue": {user: "alice", job: edit(func(j *trainjob.TrainJob) {
			delete(j.Labels, "kueue.x-k8s.io/queue-name")
		})},
		"numNodes edited on Trainer v2.3": {shape: v23, user: "alice", job: edit(func(j *trainjob.TrainJob) {
			j.Spec.Trainer = &trainjob.Trainer{NumNodes: ptr.To[int32](2)}
		}), denied: "spec.trainer"},
		// v2.1 re-applies the JobSet it built at the job's first
		// reconcile, and JobSet v0.10 refuses the new counts.
		"numNodes edited on Trainer v2.1": {user: "alice", job: edit(func(j *trainjob.TrainJob) {
			j.Spec.Trainer = &trainjob.Trainer{NumNodes: ptr.To[int32](2)}
		}), denied: "spec.trainer"},
		"numNodes edited on Trainer v2.0": {shape: shape.PodSpecOverrides{}, user: "alice", job: edit(func(j *trainjob.TrainJob) {
			j.Spec.Trainer = &trainjob.Trainer{NumNodes: ptr.To[int32](2)}
		}), denied: "spec.trainer"},

		"a user sets a gang mode we don't know": {user: "alice", job: edit(oldGang), denied: names.GangSchedulingAnnotation},
		"a checkpoint interval under a minute": {user: "alice", job: edit(func(j *trainjob.TrainJob) {
			j.Annotations = map[string]string{names.CheckpointIntervalAnnotation: "30s"}
		}), denied: names.CheckpointIntervalAnnotation},
		"a checkpoint interval": {user: "alice", job: edit(func(j *trainjob.TrainJob) {
			j.Annotations = map[string]string{names.CheckpointIntervalAnnotation: "30m"}
		})},
		"a preemption notice over 15 minutes": {user: "alice", job: edit(func(j *trainjob.TrainJob) {
			j.Annotations = map[string]string{names.PreemptionNoticeAnnotation: "20m"}
		}), denied: names.PreemptionNoticeAnnotation},
		"a preemption notice that is no duration": {user: "alice", job: edit(func(j *trainjob.TrainJob) {
			j.Annotations = map[string]string{names.PreemptionNoticeAnnotation: "two minutes"}
		}), denied: names.PreemptionNoticeAnnotation},
		"a preemption notice": {user: "alice", job: edit(func(j *trainjob.TrainJob) {
			j.Annotations = map[string]string{names.PreemptionNoticeAnnotation: "90s"}
		})},
		// A value a former release took is not judged again: it must not
		// block our suspend (or any other update) of the job.
		"trainjob-kueue suspends a job with an old release's gang mode": {user: us,
			old: edit(func(j *trainjob.TrainJob) { oldGang(j); unsuspend(j) }), job: edit(oldGang)},
		"a user adds an entry under the in-tree integration's marker": {user: "alice", job: edit(inTreeEntry), denied: "kueue.x-k8s.io/podset"},
		"entries an in-tree admission left on the job stay editable": {user: "alice", old: edit(inTreeEntry), job: edit(func(j *trainjob.TrainJob) {
			inTreeEntry(j)
			j.Labels["team"] = "a"
		})},
		// While we stand by for a switch of integrations, Kueue's built-in
		// one fills its entries and starts the job: refusing it would stop
		// every admission until the switch.
		"standing by, Kueue's built-in integration starts a queued job": {standby: true, user: "system:serviceaccount:kueue-system:kueue-controller-manager",
			job: edit(func(j *trainjob.TrainJob) { inTreeEntry(j); unsuspend(j) })},
		"standing by, Kueue's own rules still hold: a started job keeps its queue": {standby: true, user: "alice", job: edit(func(j *trainjob.TrainJob) {
			unsuspend(j)
			delete(j.Labels, "kueue.x-k8s.io/queue-name")
			j.Spec.Trainer = &trainjob.Trainer{NumNodes: ptr.To[int32](2)}
		}), denied: "metadata.labels[kueue.x-k8s.io/queue-name]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.shape
			if s == nil {
				s = shape.PodTemplateOverrides{}
			}
			w := &Webhook{client: fake.NewClientBuilder().WithScheme(scheme.New()).Build(), opts: settings.Shared{Shape: s, ManagerUsername: us}}
			w.opts.BuiltInTrainJob = tc.standby
			ctx := admission.NewContextWithRequest(t.Context(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UserInfo: authenticationv1.UserInfo{Username: tc.user}}})
			old := tc.old
			if old == nil {
				old = queued
			}
			_, err := w.ValidateUpdate(ctx, old.DeepCopy(), tc.job)
			if err == nil && tc.job.Labels["kueue.x-k8s.io/queue-name"] == "" {
				// Out of Kueue, its owner starts it.
				_, err = w.ValidateUpdate(ctx, tc.job.DeepCopy(), edit(func(j *trainjob.TrainJob) { *j = *tc.job.DeepCopy(); unsuspend(j) }))
			}
			switch {
			case tc.denied != "":
				if err == nil || !strings.Contains(err.Error(), tc.denied) {
					t.Errorf("got %v, want a denial naming %q", err, tc.denied)
				}
			case err != nil:
				t.Errorf("denied: %v", err)
			}
		})
	}
}
