package queuecondition

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

var created = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func testJob(mutate ...func(*trainjob.TrainJob)) *trainjob.TrainJob {
	j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "llm", UID: "uid-1", CreationTimestamp: metav1.NewTime(created), Generation: 2,
		Labels: map[string]string{constants.QueueLabel: "lq"}}}
	j.Spec.Suspend = ptr.To(true)
	for _, m := range mutate {
		m(j)
	}
	return j
}

// trainers are Trainer's own conditions, which no write of ours touches.
var trainers = []metav1.Condition{
	{Type: "Suspended", Status: metav1.ConditionTrue, Reason: "Suspended", Message: "TrainJob is suspended", LastTransitionTime: metav1.NewTime(created)},
	{Type: "Created", Status: metav1.ConditionTrue, Reason: "JobsCreationSucceeded", Message: "jobs created", LastTransitionTime: metav1.NewTime(created)},
}

func withTrainers(j *trainjob.TrainJob) {
	j.Status.Conditions = append([]metav1.Condition(nil), trainers...)
}

func testWorkload(job *trainjob.TrainJob, mutate ...func(*kueue.Workload)) *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: jobframework.GetWorkloadNameForOwnerWithGVK(job.Name, job.UID, trainjob.GVK),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: trainjob.GVK.GroupVersion().String(), Kind: trainjob.GVK.Kind, Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}}}
	wl.Spec.QueueName = "lq"
	for _, m := range mutate {
		m(wl)
	}
	return wl
}

func admitted(wl *kueue.Workload) {
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "gpus"}
	wl.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: metav1.NewTime(created)},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: metav1.NewTime(created)},
	}
}

func ours(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: names.AdmittedCondition, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(created)}
}

func TestReconcileWritesOurConditionOnlyWhenTheStateChanges(t *testing.T) {
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "gpus"}}
	queuedWords := "queued on LocalQueue lq (ClusterQueue gpus), waiting for quota; kubectl trainjob-kueue explain says why it does not fit yet"
	refuse := interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
		return apierrors.NewInvalid(schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "TrainJob"}, "llm", field.ErrorList{field.TooMany(field.NewPath("status", "conditions"), 9, 8)})
	}}
	for name, tc := range map[string]struct {
		job      *trainjob.TrainJob
		wl       func(*trainjob.TrainJob) *kueue.Workload
		age      time.Duration
		funcs    interceptor.Funcs
		want     []metav1.Condition // the job's conditions after
		writes   int
		requeue  time.Duration
		wantSaid string
	}{
		"queued, young: waits for its first state to settle": {job: testJob(withTrainers), wl: func(j *trainjob.TrainJob) *kueue.Workload { return testWorkload(j) },
			age: 2 * time.Second, want: trainers, requeue: 3 * time.Second},
		"queued, settled: told first, Trainer's conditions kept after it (kubectl's STATE is the last's)": {job: testJob(withTrainers), wl: func(j *trainjob.TrainJob) *kueue.Workload { return testWorkload(j) },
			age: time.Minute, want: append([]metav1.Condition{ours(metav1.ConditionFalse, "Queued", queuedWords)}, trainers...), writes: 1},
		"queued, no status at all yet: the list created": {job: testJob(), age: time.Minute,
			want: []metav1.Condition{ours(metav1.ConditionFalse, "Queued", queuedWords)}, writes: 1},
		"queued, already told: no write": {job: testJob(withTrainers, func(j *trainjob.TrainJob) {
			j.Status.Conditions = append([]metav1.Condition{ours(metav1.ConditionFalse, "Queued", queuedWords)}, j.Status.Conditions...)
		}), wl: func(j *trainjob.TrainJob) *kueue.Workload { return testWorkload(j) }, age: time.Minute,
			want: append([]metav1.Condition{ours(metav1.ConditionFalse, "Queued", queuedWords)}, trainers...)},
		"admitted a moment ago, our start about to write the job: waits for it": {job: testJob(func(j *trainjob.TrainJob) {
			j.Status.Conditions = []metav1.Condition{trainers[0], ours(metav1.ConditionFalse, "Queued", queuedWords), trainers[1]}
		}), wl: func(j *trainjob.TrainJob) *kueue.Workload { return testWorkload(j, admitted) }, age: time.Second,
			want: []metav1.Condition{trainers[0], ours(metav1.ConditionFalse, "Queued", queuedWords), trainers[1]}, requeue: 4 * time.Second},
		"started a moment after its admission: told at once, in place of queued, moved first": {job: testJob(func(j *trainjob.TrainJob) {
			j.Spec.Suspend = ptr.To(false)
			j.Status.Conditions = []metav1.Condition{trainers[0], ours(metav1.ConditionFalse, "Queued", queuedWords), trainers[1]}
		}), wl: func(j *trainjob.TrainJob) *kueue.Workload { return testWorkload(j, admitted) }, age: time.Second,
			want: []metav1.Condition{ours(metav1.ConditionTrue, "Admitted", "admitted by ClusterQueue gpus"), trainers[0], trainers[1]}, writes: 1},
		"admitted, not started after Settle (our start waits): told": {job: testJob(func(j *trainjob.TrainJob) {
			j.Status.Conditions = []metav1.Condition{trainers[0], ours(metav1.ConditionFalse, "Queued", queuedWords), trainers[1]}
		}), wl: func(j *trainjob.TrainJob) *kueue.Workload { return testWorkload(j, admitted) }, age: time.Minute,
			want: []metav1.Condition{ours(metav1.ConditionTrue, "Admitted", "admitted by ClusterQueue gpus"), trainers[0], trainers[1]}, writes: 1},
		"running, told admitted: no write": {job: testJob(func(j *trainjob.TrainJob) {
			j.Spec.Suspend = ptr.To(false)
			j.Status.Conditions = []metav1.Condition{ours(metav1.ConditionTrue, "Admitted", "admitted by ClusterQueue gpus")}
		}), wl: func(j *trainjob.TrainJob) *kueue.Workload { return testWorkload(j, admitted) }, age: time.Hour,
			want: []metav1.Condition{ours(metav1.ConditionTrue, "Admitted", "admitted by ClusterQueue gpus")}},
		"dispatched to MultiKueue: MultiKueue copies the worker's": {job: testJob(func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName) }),
			wl: func(j *trainjob.TrainJob) *kueue.Workload { return testWorkload(j, admitted) }, age: time.Hour},
		"for MultiKueue, queued on the manager: told": {job: testJob(func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName) }),
			wl: func(j *trainjob.TrainJob) *kueue.Workload { return testWorkload(j) }, age: time.Hour,
			want: []metav1.Condition{ours(metav1.ConditionFalse, "Queued", queuedWords)}, writes: 1},
		"not queued: none": {job: testJob(func(j *trainjob.TrainJob) { j.Labels = nil }), age: time.Hour},
		"finished: left as it was": {job: testJob(func(j *trainjob.TrainJob) {
			j.Status.Conditions = []metav1.Condition{ours(metav1.ConditionTrue, "Admitted", "admitted by ClusterQueue gpus"),
				{Type: "Complete", Status: metav1.ConditionTrue, Reason: "JobSetCompleted", LastTransitionTime: metav1.NewTime(created)}}
		}), age: time.Hour,
			want: []metav1.Condition{ours(metav1.ConditionTrue, "Admitted", "admitted by ClusterQueue gpus"), {Type: "Complete", Status: metav1.ConditionTrue, Reason: "JobSetCompleted", LastTransitionTime: metav1.NewTime(created)}}},
		"refused by validation: said once, not retried": {job: testJob(withTrainers), age: time.Minute, funcs: refuse, want: trainers,
			wantSaid: "Warning QueueConditionRefused"},
	} {
		t.Run(name, func(t *testing.T) {
			objs := []client.Object{tc.job, lq}
			if tc.wl != nil {
				objs = append(objs, tc.wl(tc.job))
			}
			writes := 0
			funcs := tc.funcs
			inner := funcs.SubResourcePatch
			funcs.SubResourcePatch = func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				writes++
				if inner != nil {
					return inner(ctx, c, sub, obj, p, opts...)
				}
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithStatusSubresource(&trainjob.TrainJob{}).WithInterceptorFuncs(funcs).Build()
			rec := events.NewFakeRecorder(10)
			r := New(Options{Client: c, Recorder: rec, Now: func() time.Time { return created.Add(tc.age) }})
			for range 2 { // a second reconcile finds nothing more to do
				res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tc.job)})
				if err != nil {
					t.Fatal(err)
				}
				if res.RequeueAfter != tc.requeue {
					t.Errorf("requeue after %v, want %v", res.RequeueAfter, tc.requeue)
				}
			}
			got := &trainjob.TrainJob{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(tc.job), got); err != nil {
				t.Fatal(err)
			}
			for i := range got.Status.Conditions {
				if got.Status.Conditions[i].Type == names.AdmittedCondition && got.Status.Conditions[i].LastTransitionTime.IsZero() {
					t.Error("our condition has no transition time")
				}
				got.Status.Conditions[i].LastTransitionTime = metav1.NewTime(created)
			}
			if diff := cmp.Diff(tc.want, got.Status.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			wantWrites := tc.writes
			if tc.funcs.SubResourcePatch != nil {
				wantWrites = 1 // refused once, then not tried again for the same words
			}
			if writes != wantWrites {
				t.Errorf("%d writes, want %d", writes, wantWrites)
			}
			var said []string
			for len(rec.Events) > 0 {
				said = append(said, <-rec.Events)
			}
			if tc.wantSaid == "" && len(said) > 0 || tc.wantSaid != "" && (len(said) != 1 || !strings.HasPrefix(said[0], tc.wantSaid)) {
				t.Errorf("events %q, want one starting %q", said, tc.wantSaid)
			}
		})
	}
}

// The condition's table maps every state.
func TestEveryStateIsTold(t *testing.T) {
	table := tellings()
	if missing := lifecycle.Unmapped(func(s lifecycle.State) bool { _, ok := table[s]; return ok }); len(missing) > 0 {
		t.Errorf("the condition does not map the states %v (queuecondition/condition.go)", missing)
	}
	for s, told := range table {
		if told.write && told.words == nil {
			t.Errorf("state %s is written without words", s)
		}
	}
}

// A Kueue message that changes as the queue moves, or a job's progress,
// wakes nothing; what the state is read from does.
func TestOnlyStateChangesWake(t *testing.T) {
	job := testJob(withTrainers)
	wl := testWorkload(job, func(wl *kueue.Workload) {
		apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending", Message: "couldn't assign flavors: 4 GPUs short"})
	})
	touched := wl.DeepCopy()
	touched.Status.Conditions[0].Message = "couldn't assign flavors: 8 GPUs short"
	if workloadFingerprint(wl) != workloadFingerprint(touched) {
		t.Error("a new pending message of Kueue's wakes the condition")
	}
	reserved := wl.DeepCopy()
	admitted(reserved)
	if workloadFingerprint(wl) == workloadFingerprint(reserved) {
		t.Error("an admission does not wake the condition")
	}
	progressed := job.DeepCopy()
	progressed.Status.TrainerStatus = nil
	progressed.Annotations = map[string]string{"x": "y"}
	if jobFingerprint(job) != jobFingerprint(progressed) {
		t.Error("a change of the job that is no state's wakes the condition")
	}
	started := job.DeepCopy()
	started.Spec.Suspend = ptr.To(false)
	dropped := job.DeepCopy()
	dropped.Status.Conditions = append(dropped.Status.Conditions, ours(metav1.ConditionFalse, "Queued", "q"))
	for name, changed := range map[string]*trainjob.TrainJob{"started": started, "our condition written or dropped": dropped} {
		if jobFingerprint(job) == jobFingerprint(changed) {
			t.Errorf("%s: does not wake the condition", name)
		}
	}
}

// A copy of the job the cache has not caught up on (Trainer, or our last
// write, moved it on) never appends a second condition of ours nor reads
// as a refusal: the write is guarded by the copy's resourceVersion, fails
// as stale, and is tried again once the cache caught up — never by a live
// read of the job (a request a job the cache serves for free) — where the
// condition is already told.
func TestAStaleCopyNeverAddsASecondCondition(t *testing.T) {
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "gpus"}}
	queuedWords := "queued on LocalQueue lq (ClusterQueue gpus), waiting for quota; kubectl trainjob-kueue explain says why it does not fit yet"
	job := testJob(withTrainers)
	wl := testWorkload(job)
	server := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(job, wl, lq).WithStatusSubresource(&trainjob.TrainJob{}).Build()
	stale := &trainjob.TrainJob{}
	if err := server.Get(t.Context(), client.ObjectKeyFromObject(job), stale); err != nil {
		t.Fatal(err)
	}
	told := stale.DeepCopy()
	told.Status.Conditions = append([]metav1.Condition{ours(metav1.ConditionFalse, "Queued", queuedWords)}, told.Status.Conditions...)
	if err := server.Status().Update(t.Context(), told); err != nil {
		t.Fatal(err)
	}
	// The cache: the job as it was before the condition was told, while
	// behind. The fake answers a failed test op as the API server does: a
	// bare 422. No reader but the cache is given.
	behind := true
	cache := interceptor.NewClient(server, interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
		err := c.SubResource(sub).Patch(ctx, obj, p, opts...)
		if err != nil && strings.Contains(err.Error(), "test failed") {
			return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: err.Error()}}
		}
		return err
	}, Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if j, ok := obj.(*trainjob.TrainJob); ok && behind {
			stale.DeepCopyInto(j)
			return nil
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	rec := events.NewFakeRecorder(10)
	r := New(Options{Client: cache, Recorder: rec, Now: func() time.Time { return created.Add(time.Minute) }})
	res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter <= 0 {
		t.Errorf("a stale write is not tried again (%+v)", res)
	}
	// The cache caught up: nothing more to write.
	behind = false
	if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}); err != nil {
		t.Fatal(err)
	}
	got := &trainjob.TrainJob{}
	if err := server.Get(t.Context(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	want := append([]metav1.Condition{ours(metav1.ConditionFalse, "Queued", queuedWords)}, trainers...)
	if diff := cmp.Diff(want, got.Status.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if got.ResourceVersion != told.ResourceVersion {
		t.Errorf("the job was written again (resourceVersion %s, told at %s)", got.ResourceVersion, told.ResourceVersion)
	}
	if len(rec.Events) > 0 {
		t.Errorf("said %q", <-rec.Events)
	}
}
