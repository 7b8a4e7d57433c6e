package shape_test

import (
	"testing"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// BenchmarkInject is the override work of one admission and one
// preemption, per Trainer API: the JSON Patch that writes an admission
// (two roles, flavor nodeSelector, tolerations, podset label and workload
// annotation) into a job with a user entry of its own, and the one that
// takes it out again. No client.
func BenchmarkInject(b *testing.B) {
	cases := []struct {
		name  string
		shape shape.Shape
		job   *trainjob.TrainJob
	}{
		{"v2.0-podSpecOverrides", shape.PodSpecOverrides{}, v20(nil, trainjob.PodSpecOverride{
			TargetJobs: []trainjob.TargetJob{{Name: "node"}}, NodeSelector: map[string]string{"disk": "ssd"}})},
		{"v2.1-podTemplateOverrides", shape.PodTemplateOverrides{}, job(user("node", "disk"))},
		{"v2.2+-runtimePatches", shape.RuntimePatches{}, jobWithPatches(patchFor("platform-team", "node", `{"spec":{"nodeSelector":{"disk":"ssd"}}}`))},
	}
	for _, tc := range cases {
		want := admission()
		injected := applyTo(b, tc.job, tc.shape.Inject(tc.job, want))
		b.Run(tc.name+"/inject", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ops := tc.shape.Inject(tc.job, want); len(ops) == 0 {
					b.Fatal("nothing injected")
				}
			}
		})
		b.Run(tc.name+"/restore", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ops := tc.shape.Restore(injected); len(ops) == 0 {
					b.Fatal("nothing restored")
				}
			}
		})
	}
}
