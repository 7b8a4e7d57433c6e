package integration

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// childJob is a Job of JobSet jobSet's replicatedJob role, as JobSet makes
// it, with succeeded pods and complete as given.
func childJob(name, jobSet, role string, succeeded int32, complete bool) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
		Labels:          map[string]string{jobsetapi.JobSetNameKey: jobSet, jobsetapi.ReplicatedJobNameKey: role},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: jobSet, UID: "js", Controller: ptr.To(true)}},
	}}
	j.Status.Succeeded = succeeded
	if complete {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	}
	return j
}

// A gang re-admitted after some of its pods succeeded is sized from its
// Jobs' succeeded pods, read only for a Workload evicted before; a read
// that fails fails the start instead of sizing the gang for every pod.
func TestGangProgressCountsPodsThatSucceededBeforeTheEviction(t *testing.T) {
	objs := []client.Object{
		childJob("llm-node-0", "llm", "node", 2, false),
		childJob("llm-dataset-initializer-0", "llm", "dataset-initializer", 1, true),
		childJob("other-node-0", "other", "node", 3, false),
	}
	evicted := &kueue.Workload{}
	evicted.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{{Reason: kueue.WorkloadEvictedByPreemption, Count: 1}}}
	cases := map[string]struct {
		wl      *kueue.Workload
		listErr error
		want    map[string]quota.Progress
		lists   int
		wantErr bool
	}{
		"first admission: no read": {wl: &kueue.Workload{}, want: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "node": {}}},
		"evicted before: the trainer Job's two completed indexes": {
			wl: evicted, lists: 1,
			want: map[string]quota.Progress{"dataset-initializer": {Succeeded: 1}, "node": {PodsDone: 2}},
		},
		"evicted before, the read fails": {wl: evicted, lists: 1, listErr: errors.New("boom"), wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lists := 0
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					lists++
					if tc.listErr != nil {
						return tc.listErr
					}
					return c.List(ctx, list, opts...)
				}}).Build()
			d := &deps{client: c, apiReader: c}
			job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "llm"}}
			obs := &observed{workload: tc.wl, jobs: []trainer.JobStatus{
				{Name: "dataset-initializer", Succeeded: ptr.To[int32](1)}, {Name: "node", Succeeded: ptr.To[int32](0)},
			}}
			got, err := d.gangProgress(t.Context(), job, obs)
			if lists != tc.lists {
				t.Errorf("%d lists, want %d", lists, tc.lists)
			}
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error from a failed read")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
		})
	}
}

// kueue#10487's neighbours at the start: a gang re-admitted to another
// flavor after one of its two trainer pods succeeded gets a PodGroup of
// the one pod created again, placed on the new flavor; a finished
// initializer, its pod long gone, is counted from the Jobs' status and
// gets no PodGroup at all.
func TestReadmittedGangIsPlannedForThePodsCreatedAgainOnItsNewFlavor(t *testing.T) {
	f := newStartFixture(t, shape.PodTemplateOverrides{}, nil, corev1.PodSpec{})
	f.job.Annotations = map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling}
	f.deps.opts.Gangs.PodGroupCRD = true
	for _, j := range []*batchv1.Job{childJob("j-node-0", "j", "node", 1, false), childJob("j-init-0", "j", "init", 1, true)} {
		if err := f.c.Create(t.Context(), j); err != nil {
			t.Fatal(err)
		}
	}
	f.job.obs.Roles = []podsets.Role{
		{Name: "init", Ancestor: podsets.AncestorDatasetInitializer, Replicas: 1, PodsPerReplica: 1},
		{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1, PodsPerReplica: 2, DependsOn: []podsets.Dependency{{Name: "init", Complete: true}}},
	}
	f.job.obs.jobs = []trainer.JobStatus{{Name: "init", Succeeded: ptr.To[int32](1)}, {Name: "node", Succeeded: ptr.To[int32](0)}}
	wl := f.job.obs.workload
	wl.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{{Reason: kueue.WorkloadEvictedByPreemption, Count: 1}}}
	// Admitted this time to flavor "h100", not the "gpu" it ran on.
	wl.Status.Admission.PodSetAssignments[0].Flavors["nvidia.com/gpu"] = "h100"
	f.infos[0].NodeSelector = map[string]string{"pool": "h100"}

	want, plans, err := f.job.startPlan(t.Context(), f.infos)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 || plans[0].Name != "j" || plans[0].Gang.MinMember != 1 {
		t.Fatalf("plans %+v, want one PodGroup j of the 1 trainer pod created again (none for the finished initializer)", plans)
	}
	if len(want) != 1 || want[0].NodeSelector["pool"] != "h100" || want[0].Labels[gang.PodGroupLabel] != "j" {
		t.Errorf("injection %+v, want the new flavor's nodeSelector and the PodGroup label", want)
	}
}
