package gang_test

import (
	"fmt"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// A job whose two trainer nodes wait for its dataset initializer, gang
// scheduled: one PodGroup per wave, so the initializer's gang is placed
// first and the nodes' gang once it completed. On a cluster that serves
// the Workload API alone, coscheduling waits (unserved: an admin's set-up,
// never the job's fault), and workload-api gets one group per wave of this
// admission.
func ExamplePlanFor() {
	roles := []podsets.Role{
		{Name: "dataset-initializer", Ancestor: podsets.AncestorDatasetInitializer, Replicas: 1, PodsPerReplica: 1},
		{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1, PodsPerReplica: 2,
			DependsOn: []podsets.Dependency{{Name: "dataset-initializer", Complete: true}}},
	}
	caps := shape.PodTemplateOverrides{}.Capabilities()
	for _, mode := range []string{gang.Coscheduling, gang.WorkloadAPI} {
		plans, refusal, unserved := gang.PlanFor(gang.Request{
			Job: "llm", Setting: gang.Setting{Mode: mode}, Roles: roles, Capabilities: caps,
			Gangs: gang.Schedulers{WorkloadAPI: true}, Admission: "abc123",
		})
		fmt.Printf("%s: refused %q, waits %v\n", mode, refusal, unserved != "")
		for _, p := range plans {
			fmt.Printf("  PodGroup %s: roles %v, minMember %d\n", p.Name, p.Roles, p.Gang.MinMember)
		}
	}
	// Output:
	// coscheduling: refused "", waits true
	// workload-api: refused "", waits false
	//   PodGroup llm.dataset-initializer-abc123: roles [dataset-initializer], minMember 1
	//   PodGroup llm-abc123: roles [node], minMember 2
}
