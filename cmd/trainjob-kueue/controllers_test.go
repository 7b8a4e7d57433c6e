package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// Every controller and webhook the manager runs is in the one list, for
// each mode: a standby runs only the hand-back and the webhooks.
func TestTheManagerRunsTheControllersItsModeNeeds(t *testing.T) {
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{Scheme: scheme.New(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	base := integration.Options{Shared: settings.Shared{Shape: shape.PodTemplateOverrides{}, Recorder: events.NewFakeRecorder(1)}}
	with := func(f func(*integration.Options)) integration.Options { o := base; f(&o); return o }
	for name, tc := range map[string]struct {
		opts   integration.Options
		wiring wiring
		want   []string
	}{
		"standing by for Kueue's built-in integration": {
			opts:   with(func(o *integration.Options) { o.KueueSettings = discovery.KueueSettings{BuiltInTrainJob: true} }),
			wiring: wiring{webhook: true, queueCondition: true},
			want:   []string{"the hand-back of stopped jobs to Kueue's built-in integration", "the queue condition on TrainJobs", "the TrainJob webhook", "the ClusterQueue webhook", "the JobSet webhook (no TrainJob's JobSet queued on its own)", "the Job webhook (no Job of a TrainJob's JobSet queued on its own)", "the Pod webhook (no TrainJob's pod queued on its own)"},
		},
		"a plain cluster, webhook disabled": {
			opts:   base,
			wiring: wiring{queueCondition: true},
			want: []string{"the TrainJob indexes", "the TrainJob reconciler (Kueue's job framework)", "MultiKueue's name clashes on this cluster as a worker",
				"the priority boost of preemption-cost policies", "the ClusterQueue preemption-cost warner", "the queue condition on TrainJobs"},
		},
		"a plain cluster, the queue condition off": {
			opts:   base,
			wiring: wiring{webhook: true},
			want: []string{"the TrainJob indexes", "the TrainJob reconciler (Kueue's job framework)", "MultiKueue's name clashes on this cluster as a worker",
				"the priority boost of preemption-cost policies", "the ClusterQueue preemption-cost warner", "the TrainJob webhook", "the ClusterQueue webhook", "the JobSet webhook (no TrainJob's JobSet queued on its own)", "the Job webhook (no Job of a TrainJob's JobSet queued on its own)", "the Pod webhook (no TrainJob's pod queued on its own)"},
		},
		"a MultiKueue manager with PodGroups": {
			opts: with(func(o *integration.Options) {
				o.KueueSettings = discovery.KueueSettings{MultiKueue: true}
				o.Gangs.PodGroupCRD = true
			}),
			wiring: wiring{webhook: true, queueCondition: true},
			want: []string{"the TrainJob indexes", "the TrainJob reconciler (Kueue's job framework)", "MultiKueue's name clashes on this cluster as a worker",
				"MultiKueue's worker refusals on this manager", "the PodGroup keeper",
				"the priority boost of preemption-cost policies", "the ClusterQueue preemption-cost warner", "the queue condition on TrainJobs", "the TrainJob webhook", "the ClusterQueue webhook", "the JobSet webhook (no TrainJob's JobSet queued on its own)", "the Job webhook (no Job of a TrainJob's JobSet queued on its own)", "the Pod webhook (no TrainJob's pod queued on its own)"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, c := range controllers(t.Context(), mgr, tc.opts, tc.wiring) {
				got = append(got, c.name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("controllers (-want +got):\n%s", diff)
			}
		})
	}
}

// The restart watchers are listed with the controllers, in every mode.
func TestTheRestartWatchersAreListed(t *testing.T) {
	var names []string
	for _, c := range restartWatchers(flags{}, settings.Shared{Shape: shape.PodTemplateOverrides{}}, func(error) {}) {
		names = append(names, c.name)
	}
	want := []string{"the watch of the TrainJob shape (an in-place Trainer upgrade)", "the watch of Kueue's built-in TrainJob integration (turned on or off)",
		"the watch of scheduler-plugins' PodGroup CRD (installed or removed)"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("restart watchers (-want +got):\n%s", diff)
	}
}
