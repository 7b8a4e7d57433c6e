package priorityboost

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(kueue.AddToScheme(s))
	utilruntime.Must(trainjob.AddToScheme(s))
	return s
}

const policy90 = `{"progress":{"points":1000,"stepPercent":10}}`

// What one reconcile writes on the Workload of a job at 90% in its trainer
// phase, by what its ClusterQueue and the Workload say.
func TestReconcileWritesOnlyWhatThePolicyAndTheStepSay(t *testing.T) {
	const ns = "ns"
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", UID: "uid"}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	job.Status.TrainerStatus = &trainer.TrainerStatus{ProgressPercentage: ptr.To[int32](93), LastUpdatedTime: metav1.Now()}
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torch"}}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "x"}}
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}
	cq := func(policy string) *kueue.ClusterQueue {
		c := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}}
		if policy != "" {
			c.Annotations = map[string]string{names.PreemptionCostAnnotation: policy}
		}
		return c
	}
	workload := func(annotations map[string]string, admitted bool) *kueue.Workload {
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: jobframework.GetWorkloadNameForOwnerWithGVK(job.Name, job.UID, trainjob.GVK),
			UID: "wl", Annotations: annotations, OwnerReferences: ownedBy(job)}}
		wl.Spec.QueueName = "lq"
		if admitted {
			// Two hours ago: the 93% reported is credited in full.
			wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
			wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Now().Add(-2 * time.Hour))}}
		}
		return wl
	}
	// Queued again after a preemption: progress is credited only while it
	// runs, its preemptions count.
	preempted := func(wl *kueue.Workload) *kueue.Workload {
		wl.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{{Reason: kueue.WorkloadEvictedByPreemption, Count: 1}}}
		return wl
	}
	ours := map[string]string{constants.PriorityBoostAnnotationKey: "900", names.PriorityBoostAnnotation: `{"total":900,"progress":900,"preemptions":0,"timeLeft":0}`}
	stale := map[string]string{constants.PriorityBoostAnnotationKey: "500", names.PriorityBoostAnnotation: `{"total":500,"progress":500,"preemptions":0,"timeLeft":0}`}
	foreign := map[string]string{constants.PriorityBoostAnnotationKey: "7"}
	refuse := func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		return apierrors.NewInvalid(schema.GroupKind{Group: "kueue.x-k8s.io", Kind: "Workload"}, "wl", field.ErrorList{field.Invalid(field.NewPath("metadata"), "x", "no")})
	}
	for name, tc := range map[string]struct {
		cq       *kueue.ClusterQueue
		wl       *kueue.Workload
		gateOff  bool
		patch    func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error
		want     map[string]string // the Workload's annotations after
		writes   int
		wantSaid string
	}{
		"no policy, no boost: nothing":     {cq: cq(""), wl: workload(nil, true)},
		"no policy, our boost: removed":    {cq: cq(""), wl: workload(ours, true), want: map[string]string{}, writes: 1},
		"no policy, someone's boost: left": {cq: cq(""), wl: workload(foreign, true), want: foreign},
		"a policy: 90% set, once":          {cq: cq(policy90), wl: workload(nil, true), want: ours, writes: 1},
		// Pending again after a preemption (its ClusterQueue found through
		// its LocalQueue): no part counts, so it can't preempt a peer of
		// its class; the boost it had while running is taken back.
		"a policy, pending after a preemption: no boost": {cq: cq(`{"preemptions":{"points":900,"every":1,"maxPoints":900}}`), wl: preempted(workload(nil, false))},
		"a policy, pending with the boost it ran with: removed": {cq: cq(policy90), wl: preempted(workload(ours, false)),
			want: map[string]string{}, writes: 1},
		"a policy, the step already written":    {cq: cq(policy90), wl: workload(ours, true), want: ours},
		"a policy, an older step of ours":       {cq: cq(policy90), wl: workload(stale, true), want: ours, writes: 1},
		"a policy, someone's boost: left, said": {cq: cq(policy90), wl: workload(foreign, true), want: foreign, wantSaid: ReasonBoostNotOurs},
		"a policy taking over someone's boost":  {cq: cq(`{"progress":{"points":1000,"stepPercent":10},"takeOver":true}`), wl: workload(foreign, true), want: ours, writes: 1},
		"a policy, Kueue's gate off: nothing":   {cq: cq(policy90), wl: workload(nil, true), gateOff: true},
		"an invalid policy: nothing":            {cq: cq(`{"progress":{"points":-1,"stepPercent":10}}`), wl: workload(ours, true), want: ours},
		"a policy giving 0, nothing set":        {cq: cq(`{"preemptions":{"points":5,"every":1,"maxPoints":5}}`), wl: workload(nil, true)},
		"a policy giving 0, ours set: removed":  {cq: cq(`{"preemptions":{"points":5,"every":1,"maxPoints":5}}`), wl: workload(ours, true), want: map[string]string{}, writes: 1},
		"the write refused: no retry":           {cq: cq(policy90), wl: workload(nil, true), patch: refuse},
	} {
		t.Run(name, func(t *testing.T) {
			writes := 0
			c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(job.DeepCopy(), rt.DeepCopy(), lq.DeepCopy(), tc.cq, tc.wl).
				WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					if tc.patch != nil {
						return tc.patch(ctx, c, obj, patch, opts...)
					}
					writes++
					return c.Patch(ctx, obj, patch, opts...)
				}}).Build()
			rec := events.NewFakeRecorder(8)
			m := metrics.NewMetrics()
			r := New(Options{Client: c, Runtimes: runtimesource.New(c, c, runtimesource.Options{Shape: shape.PodTemplateOverrides{}}), Recorder: rec, Metrics: m, GateOn: !tc.gateOff})
			for range 2 {
				if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}); err != nil {
					t.Fatal(err)
				}
			}
			if writes != tc.writes {
				t.Errorf("%d writes over two reconciles, want %d", writes, tc.writes)
			}
			got := &kueue.Workload{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(tc.wl), got); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil {
				want = tc.wl.Annotations
			}
			if len(want) != len(got.Annotations) {
				t.Errorf("annotations %v, want %v", got.Annotations, want)
			}
			for k, v := range want {
				if got.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, got.Annotations[k], v)
				}
			}
			var said []string
			for len(rec.Events) > 0 {
				said = append(said, <-rec.Events)
			}
			if tc.wantSaid == "" && len(said) > 0 || tc.wantSaid != "" && (len(said) != 1 || !strings.Contains(said[0], tc.wantSaid)) {
				t.Errorf("events %v, want one %q", said, tc.wantSaid)
			}
		})
	}
}

// A minimum run time is set at admission, wakes the job when it is up and
// not before, and is taken back there with one write; a job past it is
// neither written nor woken.
func TestMinRunTimeIsTakenBackWhenItsTimeIsUpWithOneWrite(t *testing.T) {
	const ns = "ns"
	admitted := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", UID: "uid"}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torch"}}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "x"}}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: map[string]string{
		names.PreemptionCostAnnotation: `{"minRunTime":{"points":300,"seconds":120}}`}}}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: jobframework.GetWorkloadNameForOwnerWithGVK(job.Name, job.UID, trainjob.GVK), UID: "wl", OwnerReferences: ownedBy(job)}}
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(admitted)}}
	writes := 0
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(job, rt, cq, wl).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			writes++
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	now := admitted.Add(30 * time.Second)
	r := New(Options{Client: c, Runtimes: runtimesource.New(c, c, runtimesource.Options{Shape: shape.PodTemplateOverrides{}}),
		Recorder: events.NewFakeRecorder(8), Metrics: metrics.NewMetrics(), GateOn: true, Now: func() time.Time { return now }})
	boostAt := func(at time.Duration) (string, time.Duration) {
		t.Helper()
		now = admitted.Add(at)
		res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
		if err != nil {
			t.Fatal(err)
		}
		got := &kueue.Workload{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(wl), got); err != nil {
			t.Fatal(err)
		}
		return got.Annotations[constants.PriorityBoostAnnotationKey], res.RequeueAfter
	}
	for _, step := range []struct {
		at     time.Duration
		boost  string
		wakeIn time.Duration
		writes int
	}{
		{at: 30 * time.Second, boost: "300", wakeIn: 90 * time.Second, writes: 1},
		{at: 60 * time.Second, boost: "300", wakeIn: 60 * time.Second, writes: 1},
		{at: 120 * time.Second, boost: "", writes: 2},
		{at: time.Hour, boost: "", writes: 2},
	} {
		boost, wakeIn := boostAt(step.at)
		if boost != step.boost || wakeIn != step.wakeIn || writes != step.writes {
			t.Errorf("%s after admission: boost %q, woken in %s, %d writes; want %q, %s, %d", step.at, boost, wakeIn, writes, step.boost, step.wakeIn, step.writes)
		}
	}
}

// ownedBy is the controller reference the job framework puts on a job's
// Workload.
func ownedBy(job *trainjob.TrainJob) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}
}

// On a MultiKueue worker a dispatched job runs against the prebuilt
// Workload the manager named: the worker ClusterQueue's policy boosts it.
func TestAWorkersPolicyBoostsThePrebuiltWorkloadOfADispatchedJob(t *testing.T) {
	const ns = "ns"
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", UID: "uid",
		Labels: map[string]string{constants.PrebuiltWorkloadLabel: "trainjob-j-fromthemanager"}}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torch"}}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "x"}}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: map[string]string{
		names.PreemptionCostAnnotation: `{"preemptions":{"points":500,"every":1,"maxPoints":500}}`}}}
	// As MultiKueue creates it on the worker: the manager's name, no owner yet.
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trainjob-j-fromthemanager", UID: "wl"}}
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Minute))}}
	wl.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{{Reason: kueue.WorkloadEvictedByPreemption, Count: 1}}}
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(job, rt, cq, wl).Build()
	r := New(Options{Client: c, Runtimes: runtimesource.New(c, c, runtimesource.Options{Shape: shape.PodTemplateOverrides{}}),
		Recorder: events.NewFakeRecorder(8), Metrics: metrics.NewMetrics(), GateOn: true})
	if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}); err != nil {
		t.Fatal(err)
	}
	got := &kueue.Workload{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(wl), got); err != nil {
		t.Fatal(err)
	}
	if b := got.Annotations[constants.PriorityBoostAnnotationKey]; b != "500" {
		t.Errorf("the prebuilt Workload's boost is %q, want 500", b)
	}
}

// An hour of a training, compressed with the controller's clock: progress
// reported every 30 s (all of it at the policy's default rate, 100% an
// hour), a checkpoint every 10 minutes, the job reconciled at each report
// and whenever the controller asked to be woken. The Workload is written
// at most the documented bound (docs/preemption-cost.md): one per progress
// step, and per checkpoint interval one per checkpoint step plus one back
// to 0. Then, its boost at rest, the job is neither written nor woken.
func TestAnHourOfReportsWritesAtMostTheDocumentedBound(t *testing.T) {
	const ns = "ns"
	admitted := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j", UID: "uid"}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torch"}}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "x"}}
	policy := preemptcost.Policy{Progress: &preemptcost.ProgressPart{Points: 1000, StepPercent: 10},
		Checkpoint: &preemptcost.CheckpointPart{Points: 1000, StepPercent: 10, IntervalSeconds: 600}}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: map[string]string{
		names.PreemptionCostAnnotation: `{"progress":{"points":1000,"stepPercent":10},"checkpoint":{"points":1000,"stepPercent":10,"intervalSeconds":600}}`}}}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: jobframework.GetWorkloadNameForOwnerWithGVK(job.Name, job.UID, trainjob.GVK), UID: "wl", OwnerReferences: ownedBy(job)}}
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(admitted)}}
	writes := 0
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(job, rt, cq, wl).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*kueue.Workload); ok {
				writes++
			}
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	now := admitted
	r := New(Options{Client: c, Runtimes: runtimesource.New(c, c, runtimesource.Options{Shape: shape.PodTemplateOverrides{}}),
		Recorder: events.NewFakeRecorder(64), Metrics: metrics.NewMetrics(), GateOn: true, Now: func() time.Time { return now }})
	report := func(progress int32, checkpoint time.Time) {
		t.Helper()
		got := &trainjob.TrainJob{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(job), got); err != nil {
			t.Fatal(err)
		}
		got.Status.TrainerStatus = &trainer.TrainerStatus{ProgressPercentage: ptr.To(progress), LastUpdatedTime: metav1.NewTime(now),
			Metrics: []trainer.Metric{{Name: preemptcost.DefaultCheckpointMetric, Value: fmt.Sprint(checkpoint.Unix())}}}
		if err := c.Update(t.Context(), got); err != nil {
			t.Fatal(err)
		}
	}
	reconcile := func() time.Duration {
		t.Helper()
		res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
		if err != nil {
			t.Fatal(err)
		}
		return res.RequeueAfter
	}
	var wake time.Time
	reconciles, woken := 0, 0
	lastCheckpoint := admitted
	for at := time.Duration(0); at <= time.Hour; at += 10 * time.Second {
		now = admitted.Add(at)
		due := !wake.IsZero() && !now.Before(wake)
		if due {
			woken++
		}
		if at%(30*time.Second) == 0 {
			if at > 0 && at%(10*time.Minute) == 0 {
				lastCheckpoint = now
			}
			report(int32(min(100, at/(36*time.Second))), lastCheckpoint)
			due = true
		}
		if !due {
			continue
		}
		reconciles++
		wake = time.Time{}
		if after := reconcile(); after > 0 {
			wake = now.Add(after)
		}
	}
	// Woken by the clock only at step boundaries: the checkpoint part's
	// steps last a minute, the progress part's 6 minutes at this rate.
	if steps := 60 + 10; woken > steps {
		t.Errorf("woken %d times by the clock in an hour, more than its %d step boundaries", woken, steps)
	}
	bound := int(100/policy.Progress.StepPercent) + 6*int(100/policy.Checkpoint.StepPercent+1)
	if writes > bound || writes < 6 {
		t.Errorf("%d writes of the Workload over an hour of %d reconciles, want between 6 (one per checkpoint at least) and the documented bound %d", writes, reconciles, bound)
	}
	t.Logf("an hour: %d reconciles (%d woken by the clock), %d writes (bound %d)", reconciles, woken, writes, bound)

	// At rest: done training (100%), checkpointed a moment ago under a
	// policy of progress alone: nothing to write, no wake-up.
	rest := `{"progress":{"points":1000,"stepPercent":10}}`
	got := &kueue.ClusterQueue{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(cq), got); err != nil {
		t.Fatal(err)
	}
	got.Annotations[names.PreemptionCostAnnotation] = rest
	if err := c.Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	now = admitted.Add(2 * time.Hour)
	report(100, now)
	reconcile()
	before := writes
	for range 3 {
		now = now.Add(time.Minute)
		if after := reconcile(); after != 0 {
			t.Errorf("a job whose boost can't change is woken in %s", after)
		}
	}
	if writes != before {
		t.Errorf("%d writes of a job at rest, want none", writes-before)
	}
}
