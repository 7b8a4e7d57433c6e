package migrate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// The way back, as Kueue's built-in integration will take it: a running
// job whose Workload books other pods than that integration computes from
// the live runtime is stopped (the edited runtime named); one admitted
// but not started loses its place; a queued one is corrected in place;
// equivalent PodSets keep every job as it is.
func TestJudgeWayBackDecidesAsKueuesBuiltInIntegrationWill(t *testing.T) {
	booked := []kueue.PodSet{podSet("node", 2, "4")}
	edited := []kueue.PodSet{podSet("node", 4, "4")}
	job := func(running bool) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: "u", Labels: map[string]string{constants.QueueLabel: "lq"}}}
		j.Spec.Suspend = ptr.To(!running)
		j.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
		return j
	}
	wl := func(reserved bool) *kueue.Workload {
		w := &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: booked}}
		if reserved {
			w.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
			w.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
		}
		return w
	}
	for name, tc := range map[string]struct {
		j    Job
		want Decision
		says []string
	}{
		"running, its runtime as it started":            {j: Job{Job: job(true), Workload: wl(true), PodSets: booked}, want: Adopted},
		"running, its runtime edited since":             {j: Job{Job: job(true), Workload: wl(true), PodSets: edited}, want: Stopped, says: []string{"TrainingRuntime team/torch", "NoMatchingWorkload", "finished"}},
		"admitted, not started, its runtime edited":     {j: Job{Job: job(false), Workload: wl(true), PodSets: edited}, want: Recreated},
		"queued, its runtime edited":                    {j: Job{Job: job(false), Workload: wl(false), PodSets: edited}, want: CorrectedInPlace},
		"running, the built-in integration cannot tell": {j: Job{Job: job(true), Workload: wl(true), Err: errors.New("runtime 'torch' not found")}, want: Unknown, says: []string{"not found"}},
		"running without a reservation":                 {j: Job{Job: job(true), Workload: wl(false), PodSets: booked}, want: Stopped},
		"dispatched by MultiKueue: MultiKueue's to run": {j: Job{Job: func() *trainjob.TrainJob {
			j := job(true)
			j.Spec.ManagedBy = ptr.To(trainjob.MultiKueueControllerName)
			return j
		}(), Workload: wl(true)}, want: LeftAlone},
		"queued, no Workload yet": {j: Job{Job: job(false)}, want: NewWorkload},
	} {
		t.Run(name, func(t *testing.T) {
			v := JudgeWayBack(tc.j)
			if v.Decision != tc.want {
				t.Errorf("decision %q (%s), want %q", v.Decision, v.Reason, tc.want)
			}
			for _, s := range tc.says {
				if !strings.Contains(v.Reason, s) {
					t.Errorf("%q does not say %q", v.Reason, s)
				}
			}
			if v.StopsARunningJob() != (tc.want == Stopped) {
				t.Errorf("StopsARunningJob = %v", v.StopsARunningJob())
			}
		})
	}
}

// Kueue's own code computes the way back's PodSets: the live runtime's
// pods, not the ones the job's Workload booked.
func TestInTreePodSetsAreKueuesBuiltInIntegrations(t *testing.T) {
	rt := runtimeOf("team", "torch", 1)
	rt.Spec.Template.Spec.ReplicatedJobs[0].Name = "node"
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.ObjectMeta.Labels = map[string]string{"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
	rt.Spec.MLPolicy = &trainer.MLPolicy{NumNodes: ptr.To[int32](3)}
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: types.UID("u")}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind), APIGroup: ptr.To(trainer.GroupVersion.Group)}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rt).Build()
	inTree, err := InTreePodSets(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := inTree(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int32{}
	for _, ps := range got {
		counts[string(ps.Name)] = ps.Count
	}
	if diff := cmp.Diff(map[string]int32{"node": 3}, counts); diff != "" {
		t.Errorf("PodSets (-want +got):\n%s", diff)
	}
	var wls kueue.WorkloadList
	if err := c.List(t.Context(), &wls); err != nil || len(wls.Items) != 0 {
		t.Errorf("the dry run stored %d Workloads (%v)", len(wls.Items), err)
	}
	// Through the check: the way back stops the running job booked for 2.
	job.Labels = map[string]string{constants.QueueLabel: "lq"}
	job.Spec.Suspend = ptr.To(false)
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "wl", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}}}
	wl.Spec.PodSets = got
	wl.Spec.PodSets[0].Count = 2
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
	c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rt, job, wl).WithStatusSubresource(wl).Build()
	verdicts, err := checkWith(t.Context(), c, Options{Namespace: "team", To: ToInTree, InTree: inTreeOn(c)}, shape.RuntimePatches{}, podsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(verdicts) != 1 || verdicts[0].Decision != Stopped {
		t.Errorf("verdicts %+v, want the running job stopped", verdicts)
	}
}

func inTreeOn(c client.Client) PodSetsOf {
	f, err := InTreePodSets(context.Background(), c)
	if err != nil {
		panic(err)
	}
	return f
}
