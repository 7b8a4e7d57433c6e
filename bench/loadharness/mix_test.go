package loadharness

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTheMixCyclesThroughItsRuntimes(t *testing.T) {
	var got []string
	var gpus []int64
	for i := range 6 {
		got = append(got, RuntimeOf(i))
		gpus = append(gpus, GPUsOf(i))
	}
	if diff := cmp.Diff([]string{TorchWithInitializers, MPI, Torch, TorchWithInitializers, MPI, Torch}, got); diff != "" {
		t.Errorf("RuntimeOf (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{2, 2, 1, 2, 2, 1}, gpus); diff != "" {
		t.Errorf("GPUsOf (-want +got):\n%s", diff)
	}
	if JobName(7) != "job-00007" {
		t.Errorf("JobName(7) = %q", JobName(7))
	}
}

func TestRuntimesWaitForTheInitializersNamed(t *testing.T) {
	for name, initializers := range map[string][]string{
		"none":    nil,
		"dataset": {"dataset-initializer"},
		"both":    {"dataset-initializer", "model-initializer"},
	} {
		t.Run(name, func(t *testing.T) {
			rts := Runtimes("ns", RunFor(0), initializers...)
			var names []string
			for _, rt := range rts {
				names = append(names, rt.Name)
			}
			if diff := cmp.Diff([]string{TorchWithInitializers, MPI, Torch}, names); diff != "" {
				t.Fatalf("runtimes (-want +got):\n%s", diff)
			}
			jobs := rts[0].Spec.Template.Spec.ReplicatedJobs
			var roles []string
			var dependsOn []string
			for _, rj := range jobs {
				roles = append(roles, rj.Name)
				for _, d := range rj.DependsOn {
					dependsOn = append(dependsOn, d.Name)
				}
			}
			if diff := cmp.Diff(append(append([]string{}, initializers...), "node"), roles); diff != "" {
				t.Errorf("roles of %s (-want +got):\n%s", TorchWithInitializers, diff)
			}
			if diff := cmp.Diff(initializers, dependsOn); diff != "" {
				t.Errorf("the trainer nodes wait for (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunForIsKwoksCompletionWindow(t *testing.T) {
	got := RunFor(90 * 1e9)
	want := map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": "1m30s", "pod-complete.stage.kwok.x-k8s.io/jitter-delay": "1m31s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RunFor (-want +got):\n%s", diff)
	}
}
