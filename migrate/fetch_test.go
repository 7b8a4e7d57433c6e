package migrate

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func runtimeOf(ns, name string, pods int32) *trainer.TrainingRuntime {
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1,
		Template: batchJob(pods)}}
	return rt
}

// The check reads each kind once however many jobs there are, and judges
// each job against its own runtime: on Trainer v2.3 the job's snapshot of
// it, not the runtime as edited since.
func TestCheckListsEachKindOnceAndJudgesEveryJob(t *testing.T) {
	v23 := shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{RuntimeSnapshot: true}}
	for _, n := range []int{3, 30} {
		t.Run(fmt.Sprintf("%d jobs", n), func(t *testing.T) {
			live := runtimeOf("team", "torch", 4) // edited to 4 pods since the jobs were created
			var objs []client.Object
			want := map[string]Decision{}
			objs = append(objs, live)
			for i := range n {
				job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprintf("j%d", i), UID: types.UID(fmt.Sprintf("u%d", i)),
					Labels: map[string]string{constants.QueueLabel: "lq"}}}
				job.Spec.Suspend = ptr.To(true)
				job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
				snapshot := runtimeOf("team", "torch", 2)
				ps, err := podsets.Build(job, &snapshot.Spec, v23, podsets.Options{})
				if err != nil {
					t.Fatal(err)
				}
				wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "wl-" + job.Name, OwnerReferences: []metav1.OwnerReference{{
					APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}}}
				wl.Spec.PodSets = ps
				want[job.Name] = Adopted
				if i%3 == 1 {
					// Booked by another integration for the live runtime.
					wl.Spec.PodSets[0].Count = 4
					want[job.Name] = CorrectedInPlace
				}
				objs = append(objs, job, wl, fixtures.RuntimeSnapshot(t, job, snapshot))
			}
			reads := 0
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).
				WithInterceptorFuncs(interceptor.Funcs{
					List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
						reads++
						return c.List(ctx, list, opts...)
					},
					Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						reads++
						return c.Get(ctx, key, obj, opts...)
					},
				}).Build()
			verdicts, err := checkWith(t.Context(), c, Options{Namespace: "team"}, v23, podsets.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]Decision{}
			for _, v := range verdicts {
				got[v.Name] = v.Decision
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			// TrainJobs, Workloads, TrainingRuntimes, ClusterTrainingRuntimes, ConfigMaps.
			if reads != 5 {
				t.Errorf("%d reads for %d jobs, want 5", reads, n)
			}
		})
	}
}

func batchJob(pods int32) batchv1.JobTemplateSpec {
	var t batchv1.JobTemplateSpec
	t.Spec.Parallelism = ptr.To(pods)
	t.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "pytorch"}}
	return t
}
