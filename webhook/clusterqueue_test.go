package webhook

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// A batch admin's policy or gang setting that can't be used is refused
// when written, naming the annotation and the field; one already in place
// never blocks an unrelated edit.
func TestClusterQueueAnnotationsAreRefusedWhenWritten(t *testing.T) {
	cq := func(annotations map[string]string) *kueue.ClusterQueue {
		return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: annotations}}
	}
	bad := map[string]string{names.PreemptionCostAnnotation: `{"progress":{"points":-1,"stepPercent":10}}`}
	for name, tc := range map[string]struct {
		old, cq *kueue.ClusterQueue
		gangs   gang.Schedulers
		refused []string
	}{
		"workload-api where Kubernetes serves its PodGroups": {cq: cq(map[string]string{names.GangSchedulingAnnotation: gang.WorkloadAPI}), gangs: gang.Schedulers{WorkloadAPI: true}},
		"workload-api where it does not": {cq: cq(map[string]string{names.GangSchedulingAnnotation: gang.WorkloadAPI}), gangs: gang.Schedulers{PodGroupCRD: true},
			refused: []string{names.GangSchedulingAnnotation, "scheduling.k8s.io/v1beta1", "GenericWorkload"}},
		"coscheduling where scheduler-plugins' CRD is installed": {cq: cq(map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling}), gangs: gang.Schedulers{PodGroupCRD: true}},
		"coscheduling where it is not": {cq: cq(map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling}), gangs: gang.Schedulers{WorkloadAPI: true},
			refused: []string{names.GangSchedulingAnnotation, "podgroups.scheduling.x-k8s.io", "install scheduler-plugins", gang.WorkloadAPI}},
		"workload-api in place, another edit": {old: cq(map[string]string{names.GangSchedulingAnnotation: gang.WorkloadAPI}),
			cq: cq(map[string]string{names.GangSchedulingAnnotation: gang.WorkloadAPI, "team": "a"})},
		"a good policy":             {cq: cq(map[string]string{names.PreemptionCostAnnotation: `{"minRunTime":{"points":10,"seconds":60}}`})},
		"a policy with a bad field": {cq: cq(bad), refused: []string{names.PreemptionCostAnnotation, "progress.points"}},
		"a policy that is no JSON":  {cq: cq(map[string]string{names.PreemptionCostAnnotation: "progress=10"}), refused: []string{"not a policy"}},
		"a gang mode we don't know": {cq: cq(map[string]string{names.GangSchedulingAnnotation: "volcano"}), refused: []string{names.GangSchedulingAnnotation}},
		// Said to the jobs' owners instead; their jobs still start whole.
		"a gang timeout that is no number":    {cq: cq(map[string]string{names.GangScheduleTimeoutAnnotation: "soon"})},
		"a bad policy set by an update":       {old: cq(nil), cq: cq(bad), refused: []string{"progress.points"}},
		"a bad policy in place, another edit": {old: cq(bad), cq: cq(map[string]string{names.PreemptionCostAnnotation: bad[names.PreemptionCostAnnotation], "team": "a"})},
		"no annotation of ours":               {old: cq(nil), cq: cq(map[string]string{"team": "a"})},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			if tc.old == nil {
				_, err = ClusterQueues{Gangs: tc.gangs}.ValidateCreate(t.Context(), tc.cq)
			} else {
				_, err = ClusterQueues{Gangs: tc.gangs}.ValidateUpdate(t.Context(), tc.old, tc.cq)
			}
			if len(tc.refused) == 0 {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want a refusal naming %v", tc.refused)
			}
			for _, want := range tc.refused {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not name %q", err, want)
				}
			}
		})
	}
}
