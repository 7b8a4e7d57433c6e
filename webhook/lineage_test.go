package webhook

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// family is a TrainJob and what its controllers made: its JobSet, one Job
// of it and a pod of that Job, each owned by the one before by name and
// UID, as Trainer, JobSet and the Job controller make them.
type family struct {
	trainJob *trainjob.TrainJob
	jobSet   *jobsetapi.JobSet
	job      *batchv1.Job
	pod      *corev1.Pod
}

func controlledBy(apiVersion, kind, name string, uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
}

func newFamily() family {
	tj := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "llama", UID: "tj-uid"}}
	tj.Spec.Suspend = ptr.To(false)
	js := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "llama", UID: "js-uid",
		OwnerReferences: controlledBy("trainer.kubeflow.org/v1alpha1", "TrainJob", "llama", "tj-uid")}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "llama-node-0", UID: "job-uid",
		OwnerReferences: controlledBy("jobset.x-k8s.io/v1alpha2", "JobSet", "llama", "js-uid")}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "llama-node-0-0",
		Labels:          map[string]string{jobsetapi.JobSetNameKey: "llama"},
		OwnerReferences: controlledBy("batch/v1", "Job", "llama-node-0", "job-uid")}}
	return family{trainJob: tj, jobSet: js, job: job, pod: pod}
}

// objects are the family's owners as the API server holds them.
func (f family) objects() []client.Object {
	return []client.Object{f.trainJob, f.jobSet, f.job}
}

// Every hop of a TrainJob's lineage is proven by name and UID, never by a
// label or a name alone: a claimed owner that does not exist, has another
// UID, is another kind, or is not the controller proves nothing.
func TestALineageIsProvenByUIDAtEveryHop(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*family)
		want bool
	}{
		"a TrainJob's own pod": {want: true},
		"a bare pod, labelled as the JobSet's": {edit: func(f *family) {
			f.pod.OwnerReferences = nil
		}},
		"a pod claiming the Job by name, another UID": {edit: func(f *family) {
			f.pod.OwnerReferences[0].UID = "forged"
		}},
		"a pod claiming a Job that does not exist": {edit: func(f *family) {
			f.pod.OwnerReferences[0].Name = "ghost"
		}},
		"a pod owned, not controlled, by the Job": {edit: func(f *family) {
			f.pod.OwnerReferences[0].Controller = nil
		}},
		"a pod of a Job of another kind's JobSet": {edit: func(f *family) {
			f.job.OwnerReferences[0].Kind = "ReplicaSet"
		}},
		"a Job claiming the JobSet by name, another UID": {edit: func(f *family) {
			f.job.OwnerReferences[0].UID = "forged"
		}},
		"a JobSet claiming the TrainJob by name, another UID": {edit: func(f *family) {
			f.jobSet.OwnerReferences[0].UID = "forged"
		}},
		"a JobSet claiming a TrainJob of another group": {edit: func(f *family) {
			f.jobSet.OwnerReferences[0].APIVersion = "example.com/v1"
		}},
		"a JobSet claiming a TrainJob that does not exist": {edit: func(f *family) {
			f.trainJob.Name = "other"
		}},
		"a TrainJob deleted and made again under its name": {edit: func(f *family) {
			f.trainJob.UID = "new-uid"
		}},
		"a JobSet of another name claiming the TrainJob by its real UID": {edit: func(f *family) {
			f.jobSet.Name = "llama-copy"
			f.job.OwnerReferences[0].Name = "llama-copy"
		}},
		"an owner reference without a UID": {edit: func(f *family) {
			f.jobSet.OwnerReferences[0].UID = ""
			f.trainJob.UID = ""
		}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFamily()
			if tc.edit != nil {
				tc.edit(&f)
			}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(f.objects()...).Build()
			l := lineage{cached: c, live: c}
			tj, job, err := l.ofPod(t.Context(), f.pod)
			if err != nil {
				t.Fatal(err)
			}
			if got := tj != nil; got != tc.want {
				t.Fatalf("proven a TrainJob's pod: %v, want %v", got, tc.want)
			}
			if tc.want && (tj.UID != "tj-uid" || job.UID != "job-uid") {
				t.Errorf("proven through TrainJob %s and Job %s, want tj-uid and job-uid", tj.UID, job.UID)
			}
		})
	}
}

// The cache may lag: a TrainJob it has not seen, or an older one of the
// same name it still holds, is asked of the API server; Jobs and JobSets
// are only ever asked of the API server (never cached).
func TestALineageAsksTheAPIServerWhatTheCacheCannotProve(t *testing.T) {
	f := newFamily()
	stale := f.trainJob.DeepCopy()
	stale.UID = "old-uid"
	for name, cachedObjs := range map[string][]client.Object{
		"not seen yet":             nil,
		"an older job of the name": {stale},
	} {
		t.Run(name, func(t *testing.T) {
			cached := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(cachedObjs...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, o ...client.GetOption) error {
					if _, ok := obj.(*trainjob.TrainJob); !ok {
						t.Errorf("%T read from the cache: only TrainJobs are cached", obj)
					}
					return c.Get(ctx, key, obj, o...)
				},
			}).Build()
			live := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(f.objects()...).Build()
			tj, err := (lineage{cached: cached, live: live}).ofJob(t.Context(), f.job)
			if err != nil {
				t.Fatal(err)
			}
			if tj == nil || tj.UID != "tj-uid" {
				t.Fatalf("got %v, want the TrainJob tj-uid from the API server", tj)
			}
		})
	}
}

// A read that fails says nothing of the child: it is returned (the API
// server then refuses the create, which its controller retries), never
// taken as proof, nor as no proof.
func TestALineageReadThatFailsIsAnError(t *testing.T) {
	f := newFamily()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(f.objects()...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, o ...client.GetOption) error {
			if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
				return apierrors.NewServiceUnavailable("etcd is down")
			}
			return c.Get(ctx, key, obj, o...)
		},
	}).Build()
	tj, _, err := (lineage{cached: c, live: c}).ofPod(t.Context(), f.pod)
	if err == nil || tj != nil {
		t.Fatalf("got %v, %v; want the read's error and no TrainJob", tj, err)
	}
}
