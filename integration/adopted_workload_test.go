package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A running job adopted from Kueue's built-in integration keeps the
// Workload that integration wrote, however it disagrees with what Trainer
// runs: its PodSets are the Workload's, so Kueue's job framework never
// stops it; where they disagree its owner is told once, naming the
// difference. Our own running jobs, and jobs not started, are not told.
func TestARunningAdoptedJobKeepsItsWorkloadAndIsToldWhatDiffers(t *testing.T) {
	v23 := shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{RuntimeSnapshot: true}}
	node := func(count int32) kueue.PodSet {
		return kueue.PodSet{Name: "node", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "node", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}}}}}}
	}
	kueuesPatch := trainjob.RuntimePatch{Manager: names.InTreeRuntimePatchManager, TrainingRuntimeSpec: &runtime.RawExtension{
		Raw: []byte(`{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":{"nodeSelector":{"pool":"a"}}}}}}]}}}`)}}
	for name, tc := range map[string]struct {
		running, byKueue bool
		booked           int32
		told             string
	}{
		"started by Kueue's integration, booked 3, Trainer runs 2": {running: true, byKueue: true, booked: 3, told: "PodSet 0 (node): 3 pods in its Workload, 2 by Trainer's rules"},
		"started by Kueue's integration, booked right":             {running: true, byKueue: true, booked: 2},
		"started by us, runtime edited since":                      {running: true, booked: 3},
		"not started yet":                                          {byKueue: true, booked: 3},
	} {
		t.Run(name, func(t *testing.T) {
			wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "trainjob-j-abcde", UID: "wl"}}
			wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
			wl.Spec.PodSets = []kueue.PodSet{node(tc.booked)}
			job := trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: "j"}}
			job.Spec.Suspend = ptr.To(!tc.running)
			if tc.byKueue {
				job.Spec.RuntimePatches = []trainjob.RuntimePatch{kueuesPatch}
			}
			adapter := &TrainJob{TrainJob: job, deps: &deps{opts: Options{Shared: settings.Shared{Shape: v23}}, caps: v23.Capabilities()},
				obs: &observed{workload: wl, Projection: runtimesource.Projection{PodSets: []kueue.PodSet{node(2)}}}}
			got, err := adapter.PodSets(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.running && got[0].Count != tc.booked {
				t.Errorf("a running job reports %d pods, want the %d its Workload booked: Kueue would stop it", got[0].Count, tc.booked)
			}
			var said []string
			for _, u := range adapter.notes {
				if u.reason == ReasonAdoptedWorkloadDiffers {
					said = append(said, u.msg)
				}
			}
			switch {
			case tc.told == "" && len(said) > 0:
				t.Errorf("told %q", said)
			case tc.told != "" && (len(said) != 1 || !strings.Contains(said[0], tc.told) || !strings.Contains(said[0], "trainjob-j-abcde")):
				t.Errorf("told %q, want once %q naming the Workload", said, tc.told)
			}
		})
	}
}
