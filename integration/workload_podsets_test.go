package integration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A job of two waves: a dataset initializer, then two trainer nodes that
// wait for it to complete.
func twoWaves() []podsets.Role {
	return []podsets.Role{
		{Name: "dataset-initializer", Ancestor: podsets.AncestorDatasetInitializer, Replicas: 1, PodsPerReplica: 1},
		{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1, PodsPerReplica: 2,
			DependsOn: []podsets.Dependency{{Name: "dataset-initializer", Complete: true}}},
	}
}

func reservedFor(roles []podsets.Role) *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{UID: "wl"}}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
	for _, r := range roles {
		wl.Spec.PodSets = append(wl.Spec.PodSets, kueue.PodSet{Name: kueue.NewPodSetReference(r.Name), Count: r.Count()})
	}
	return wl
}

func jobs(s ...trainer.JobStatus) []trainer.JobStatus { return s }

func jobStatus(name string, ready, succeeded int32) trainer.JobStatus {
	return trainer.JobStatus{Name: name, Ready: ptr.To(ready), Succeeded: ptr.To(succeeded)}
}

// PodsReady and ReclaimablePods judge the wave that runs, on the PodSets
// the job was admitted with.
func TestReadinessAndReclaimablePodsFollowTheWaves(t *testing.T) {
	evaluator := podsets.Role{Name: "evaluator", Ancestor: "", Replicas: 1, PodsPerReplica: 1}
	cases := map[string]struct {
		roles      []podsets.Role // the runtime as it is now
		admitted   []podsets.Role // what the Workload reserved; nil: not reserved
		jobs       []trainer.JobStatus
		runtimeErr *runtimesource.Error
		// what the Workload says from the last reconcile
		lastReady       bool
		lastReclaimable []kueue.ReclaimablePod
		ready           bool
		reclaimable     []kueue.ReclaimablePod
	}{
		"initializer running, trainer nodes not due yet": {
			roles: twoWaves(), admitted: twoWaves(), jobs: jobs(jobStatus("dataset-initializer", 1, 0)), ready: true,
		},
		"initializer done, trainer nodes not placed": {
			roles: twoWaves(), admitted: twoWaves(), jobs: jobs(jobStatus("dataset-initializer", 0, 1)),
			reclaimable: []kueue.ReclaimablePod{{Name: "dataset-initializer", Count: 1}},
		},
		"initializer done, trainer nodes running": {
			roles: twoWaves(), admitted: twoWaves(), jobs: jobs(jobStatus("dataset-initializer", 0, 1), jobStatus("node", 1, 0)), ready: true,
			reclaimable: []kueue.ReclaimablePod{{Name: "dataset-initializer", Count: 1}},
		},
		// A role added to the runtime after the admission is not the
		// running job's: judged on it, every running job of the runtime
		// would be "not ready" and evicted.
		"a role added to the runtime since the admission": {
			roles: append(twoWaves(), evaluator), admitted: twoWaves(),
			jobs: jobs(jobStatus("dataset-initializer", 0, 1), jobStatus("node", 1, 0)), ready: true,
			reclaimable: []kueue.ReclaimablePod{{Name: "dataset-initializer", Count: 1}},
		},
		"nothing reserved, nothing running": {roles: twoWaves()},
		// Trainer before v2.3 reads the live runtime; one made unusable
		// under a running job leaves what the Workload says standing:
		// no eviction for "not ready", no lowered reclaimable count (which
		// Kueue refuses).
		"runtime unusable under a running job": {
			admitted: twoWaves(), lastReady: true, lastReclaimable: []kueue.ReclaimablePod{{Name: "dataset-initializer", Count: 1}},
			jobs: jobs(jobStatus("dataset-initializer", 0, 1), jobStatus("node", 1, 0)), runtimeErr: &runtimesource.Error{Reason: ReasonInvalidRuntime},
			ready: true, reclaimable: []kueue.ReclaimablePod{{Name: "dataset-initializer", Count: 1}},
		},
		"runtime unusable, nothing reserved": {
			jobs: jobs(jobStatus("dataset-initializer", 1, 0)), runtimeErr: &runtimesource.Error{Reason: ReasonInvalidRuntime},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := &observed{Projection: runtimesource.Projection{Roles: tc.roles}, jobs: tc.jobs, runtimeErr: tc.runtimeErr}
			if tc.admitted != nil {
				obs.workload = reservedFor(tc.admitted)
				if tc.lastReady {
					obs.workload.Status.Conditions = append(obs.workload.Status.Conditions, metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionTrue})
				}
				obs.workload.Status.ReclaimablePods = tc.lastReclaimable
			}
			job := &TrainJob{TrainJob: trainjob.TrainJob{}, obs: obs}
			job.Spec.Suspend = ptr.To(tc.admitted == nil)
			if got := job.PodsReady(t.Context(), nil); got != tc.ready {
				t.Errorf("PodsReady = %v, want %v", got, tc.ready)
			}
			got, err := job.ReclaimablePods(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.reclaimable, got); diff != "" {
				t.Errorf("ReclaimablePods (-want +got):\n%s", diff)
			}
		})
	}
}

// The priority is the trainer step's priorityClassName; none while the
// runtime can't be read.
func TestPriorityClassIsTheTrainerStep(t *testing.T) {
	roles := twoWaves()
	roles[0].Template.Spec = corev1.PodSpec{PriorityClassName: "low"}
	roles[1].Template.Spec = corev1.PodSpec{PriorityClassName: "high"}
	job := &TrainJob{obs: &observed{Projection: runtimesource.Projection{Roles: roles}}}
	if got := job.PriorityClass(); got != "high" {
		t.Errorf("PriorityClass = %q, want the trainer step's %q", got, "high")
	}
	job.obs.runtimeErr = &runtimesource.Error{Reason: ReasonRuntimeNotFound}
	if got := job.PriorityClass(); got != "" {
		t.Errorf("PriorityClass without a runtime = %q, want none", got)
	}
}
