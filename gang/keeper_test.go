package gang

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// jobsOf answers Running with r for every key, or err.
type jobsOf struct {
	r   *Running
	err error
}

func (j jobsOf) Running(context.Context, types.NamespacedName) (*Running, error) { return j.r, j.err }

// What the keeper does with one running job: Trainer's PodGroup sized for
// the wave being placed (once), a gang that waits for room retried after
// the interval and not before, and nothing for a job not running here or a
// group that is not the job's.
func TestKeeper(t *testing.T) {
	const interval = 10 * time.Second
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "llm", UID: "uid"}}
	cpu := func(n string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}}}}}}
	}
	roles := []podsets.Role{
		{Name: "init", Ancestor: podsets.AncestorDatasetInitializer, Replicas: 1, PodsPerReplica: 1, Template: cpu("1")},
		{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1, PodsPerReplica: 4, Template: cpu("2"),
			DependsOn: []podsets.Dependency{{Name: "init", Complete: true}}},
	}
	owned := func(pg *schedv1alpha1.PodGroup, uid types.UID) *schedv1alpha1.PodGroup {
		pg.OwnerReferences = []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: job.Name, UID: uid, Controller: ptr.To(true)}}
		return pg
	}
	trainers := func(minMember int32, uid types.UID) *schedv1alpha1.PodGroup {
		pg := &schedv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "llm"}}
		pg.Spec.MinMember = minMember
		return owned(pg, uid)
	}
	ours := func(retriedAgo time.Duration) *schedv1alpha1.PodGroup {
		pg := &schedv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: PodGroupName(job.Name, "init", false), Labels: map[string]string{names.OwnedLabel: "true"}}}
		if retriedAgo > 0 {
			pg.Annotations = map[string]string{names.GangRetriedAtAnnotation: time.Now().Add(-retriedAgo).UTC().Format(time.RFC3339Nano)}
		}
		return owned(pg, job.UID)
	}
	initPlaced := map[string]quota.Progress{"init": {Ready: 1}}
	sized := trainers(5, job.UID)
	sized.Spec.MinResources = quota.SharedGang(roles, initPlaced).MinResources
	running := func(trainerGang bool, progress map[string]quota.Progress, admittedAgo time.Duration) *Running {
		return &Running{Job: job, Roles: roles, TrainerGang: trainerGang, Progress: progress, AdmittedAt: time.Now().Add(-admittedAgo)}
	}
	for name, tc := range map[string]struct {
		jobs        jobsOf
		groups      []client.Object
		wantMin     int32 // Trainer's group's minMember after, when it exists
		wantActions []string
		wantRequeue bool
		wantSaid    string
		wantErr     string
	}{
		"not running here":  {groups: []client.Object{trainers(5, job.UID)}, wantMin: 5},
		"a read that fails": {jobs: jobsOf{err: errors.New("etcd is on fire")}, groups: []client.Object{trainers(5, job.UID)}, wantMin: 5, wantErr: "etcd is on fire"},
		"Trainer's group sized for the initializer wave": {jobs: jobsOf{r: running(true, nil, time.Second)}, groups: []client.Object{trainers(5, job.UID)},
			wantMin: 1, wantActions: []string{ActionResized}, wantRequeue: true, wantSaid: "minMember 5 → 1 for init"},
		"Trainer's group already sized, the wave placed": {jobs: jobsOf{r: running(true, initPlaced, time.Minute)}, groups: []client.Object{sized},
			wantMin: 5},
		"another job's group of that name": {jobs: jobsOf{r: running(true, nil, time.Minute)}, groups: []client.Object{trainers(5, "other")}, wantMin: 5},
		"our gang waiting past the interval: retried": {jobs: jobsOf{r: running(false, nil, time.Minute)}, groups: []client.Object{ours(0)},
			wantActions: []string{ActionRetried}, wantRequeue: true},
		"our gang retried a moment ago: not yet": {jobs: jobsOf{r: running(false, nil, time.Minute)}, groups: []client.Object{ours(time.Second)},
			wantRequeue: true},
		"our gang admitted a moment ago: not yet": {jobs: jobsOf{r: running(false, nil, time.Second)}, groups: []client.Object{ours(0)},
			wantRequeue: true},
		"our gang placed": {jobs: jobsOf{r: running(false, initPlaced, time.Minute)}, groups: []client.Object{ours(0)}},
	} {
		t.Run(name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := schedv1alpha1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			patches := 0
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.groups...).WithInterceptorFuncs(interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					patches++
					return c.Patch(ctx, obj, patch, opts...)
				}}).Build()
			var actions []string
			var said []string
			k := NewKeeper(KeeperOptions{Client: c, Jobs: tc.jobs, RetryInterval: interval,
				Counted: func(a string) { actions = append(actions, a) },
				Say:     func(_ *trainjob.TrainJob, reason, msg string) { said = append(said, reason+": "+msg) }})
			res, err := k.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(actions) != len(tc.wantActions) || strings.Join(actions, ",") != strings.Join(tc.wantActions, ",") {
				t.Errorf("actions %v, want %v", actions, tc.wantActions)
			}
			if patches != len(tc.wantActions) {
				t.Errorf("%d patches, want %d", patches, len(tc.wantActions))
			}
			if got := res.RequeueAfter > 0 && res.RequeueAfter <= interval; got != tc.wantRequeue {
				t.Errorf("requeued after %v, want within %v: %v", res.RequeueAfter, interval, tc.wantRequeue)
			}
			if tc.wantSaid != "" && (len(said) != 1 || !strings.Contains(said[0], tc.wantSaid)) || tc.wantSaid == "" && len(said) > 0 {
				t.Errorf("said %q, want %q", said, tc.wantSaid)
			}
			pg := &schedv1alpha1.PodGroup{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "llm"}, pg); err == nil && pg.Spec.MinMember != tc.wantMin {
				t.Errorf("Trainer's PodGroup minMember %d, want %d", pg.Spec.MinMember, tc.wantMin)
			}
		})
	}
}

// Only a job that controls a PodGroup is looked at: a job without one, or
// the JobSet of such a job, brings no reconcile; the group's own creation
// does (Owns).
func TestOnlyJobsWithPodGroupsAreLookedAt(t *testing.T) {
	s := runtime.NewScheme()
	if err := schedv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	controlledBy := func(uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "x", UID: uid, Controller: ptr.To(true)}}
	}
	c := fake.NewClientBuilder().WithScheme(s).WithIndex(&schedv1alpha1.PodGroup{}, controllerIndex, controllerUID).WithObjects(
		&schedv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ganged", OwnerReferences: controlledBy("ganged")}},
		&schedv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "elsewhere", OwnerReferences: controlledBy("elsewhere")}},
	).Build()
	k := NewKeeper(KeeperOptions{Client: c})
	job := func(uid types.UID) client.Object {
		return &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: string(uid), UID: uid}}
	}
	jobSetOf := func(uid types.UID) client.Object {
		return &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "js", UID: "js-uid", OwnerReferences: controlledBy(uid)}}
	}
	for name, tc := range map[string]struct {
		obj  client.Object
		want bool
	}{
		"a job with a PodGroup":                   {obj: job("ganged"), want: true},
		"a job without":                           {obj: job("alone")},
		"a job whose namesake group is elsewhere": {obj: job("elsewhere")},
		"the JobSet of a job with a PodGroup":     {obj: jobSetOf("ganged"), want: true},
		"the JobSet of a job without":             {obj: jobSetOf("alone")},
		"a JobSet no job controls":                {obj: &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "js"}}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := k.withGroups().Generic(event.GenericEvent{Object: tc.obj}); got != tc.want {
				t.Errorf("looked at: %v, want %v", got, tc.want)
			}
		})
	}
}
