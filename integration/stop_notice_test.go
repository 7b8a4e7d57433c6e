package integration

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/metrics"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// noticeWorld is a running TrainJob whose Workload Kueue evicted at
// since, on a ClusterQueue with policy (none when ""), with its JobSet,
// one Job and a running pod of it, and a pod that only carries the
// JobSet's label (a user's forgery).
type noticeWorld struct {
	c      client.Client
	job    *TrainJob
	wl     *kueue.Workload
	events *events.FakeRecorder
}

func newNoticeWorld(t *testing.T, policy, evictedFor string, since time.Time, active int32, checkpoint *time.Time) *noticeWorld {
	t.Helper()
	since = since.Truncate(time.Second) // as the API server keeps it
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "job-uid"}}
	job.Spec.Suspend = ptr.To(false)
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch"}
	if checkpoint != nil {
		job.Status.TrainerStatus = &trainer.TrainerStatus{Metrics: []trainer.Metric{{Name: preemptcost.DefaultCheckpointMetric, Value: strconv.FormatInt(checkpoint.Unix(), 10)}}}
	}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}}
	if policy != "" {
		cq.Annotations = map[string]string{names.PreemptionCostAnnotation: policy}
	}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl", UID: "wl-uid"}}
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	wl.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved"},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: metav1.NewTime(since.Add(-time.Hour))},
		{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: evictedFor, Message: "Preempted to accommodate a workload", LastTransitionTime: metav1.NewTime(since)},
	}
	ctrl := func(kind string, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
	}
	label := map[string]string{jobsetapi.JobSetNameKey: "j"}
	js := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "js-uid", OwnerReferences: ctrl("TrainJob", "j", job.UID)}}
	child := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j-node-0", UID: "child-uid", Labels: label, OwnerReferences: ctrl("JobSet", "j", js.UID)}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j-node-0-0", Labels: label, OwnerReferences: ctrl("Job", "j-node-0", child.UID)}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	forged := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "forged", Labels: label}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(job.DeepCopy(), cq, wl.DeepCopy(), js, child, pod, forged).Build()
	stored := &trainjob.TrainJob{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(job), stored); err != nil {
		t.Fatal(err)
	}
	rec := events.NewFakeRecorder(16)
	d := newDeps(c, c, rec, Options{Shared: settings.Shared{Shape: shape.PodTemplateOverrides{}, Metrics: metrics.NewMetrics()}})
	obs := &observed{workload: wl, jobs: []trainer.JobStatus{{Name: "node", Active: ptr.To(active)}}}
	return &noticeWorld{c: c, job: &TrainJob{TrainJob: *stored, deps: d, obs: obs}, wl: wl, events: rec}
}

func (w *noticeWorld) annotation(t *testing.T, obj client.Object) string {
	t.Helper()
	if err := w.c.Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	return obj.GetAnnotations()[names.PreemptingAnnotation]
}

func (w *noticeWorld) reasons() []string {
	var out []string
	for len(w.events.Events) > 0 {
		e := <-w.events.Events
		out = append(out, strings.Join(strings.Fields(e)[:2], " "))
	}
	return out
}

// A job Kueue preempted under a policy with a notice runs on, is told
// (its Workload and its proven pods carry the notice, an event says it)
// and is woken at the notice's end; a checkpoint made in the notice, or
// the notice's end, stops it; every other eviction, a queue without the
// notice part, and a job with no pod running stop at once, as before.
func TestAPreemptedJobRunsOnInItsNoticeUntilItCheckpointsOrItRunsOut(t *testing.T) {
	const notice = `{"notice":{"seconds":120}}`
	now := time.Now()
	tenAgo, threeMinAgo, longAgo := now.Add(-10*time.Second), now.Add(-3*time.Minute), now.Add(-time.Hour)
	justNow := now.Add(-2 * time.Second)
	for name, tc := range map[string]struct {
		policy, reason string
		since          time.Time
		active         int32
		checkpoint     *time.Time
		dispatched     bool
		wantRunning    bool
		wantEvents     []string
	}{
		"in its notice: runs on, told": {policy: notice, reason: kueue.WorkloadEvictedByPreemption, since: tenAgo, active: 2, checkpoint: &longAgo,
			wantRunning: true, wantEvents: []string{"Warning " + ReasonPreemptionNotice}},
		"a queue drained: runs on, told": {policy: notice, reason: kueue.WorkloadEvictedByClusterQueueStopped, since: tenAgo, active: 2,
			wantRunning: true, wantEvents: []string{"Warning " + ReasonPreemptionNotice}},
		"checkpointed in its notice: stopped": {policy: notice, reason: kueue.WorkloadEvictedByPreemption, since: tenAgo, active: 2, checkpoint: &justNow,
			wantEvents: []string{"Normal " + ReasonPreemptionNoticeEnded}},
		"its notice ran out: stopped": {policy: notice, reason: kueue.WorkloadEvictedByPreemption, since: threeMinAgo, active: 2,
			wantEvents: []string{"Normal " + ReasonPreemptionNoticeEnded}},
		"no notice part: stopped at once":             {policy: `{"minRunTime":{"points":100,"seconds":60}}`, reason: kueue.WorkloadEvictedByPreemption, since: tenAgo, active: 2},
		"no policy: stopped at once":                  {reason: kueue.WorkloadEvictedByPreemption, since: tenAgo, active: 2},
		"past its PodsReady timeout: stopped at once": {policy: notice, reason: kueue.WorkloadEvictedByPodsReadyTimeout, since: tenAgo, active: 2},
		"no pod running: stopped at once":             {policy: notice, reason: kueue.WorkloadEvictedByPreemption, since: tenAgo},
		"dispatched here by MultiKueue: stopped at once, said why": {policy: notice, reason: kueue.WorkloadEvictedByPreemption, since: tenAgo, active: 2, dispatched: true,
			wantEvents: []string{"Warning " + ReasonPreemptionNoticeNotHeld}},
	} {
		t.Run(name, func(t *testing.T) {
			w := newNoticeWorld(t, tc.policy, tc.reason, tc.since, tc.active, tc.checkpoint)
			if tc.dispatched {
				w.wl.Labels = map[string]string{kueue.MultiKueueOriginLabel: "manager"}
			}
			_, err := w.job.Stop(t.Context(), w.c, nil, jobframework.StopReasonWorkloadEvicted, "")
			if err != nil {
				t.Fatal(err)
			}
			w.job.tell()
			stored := &trainjob.TrainJob{}
			if err := w.c.Get(t.Context(), client.ObjectKeyFromObject(&w.job.TrainJob), stored); err != nil {
				t.Fatal(err)
			}
			if running := !ptr.Deref(stored.Spec.Suspend, false); running != tc.wantRunning {
				t.Errorf("running after Stop: %v; want %v", running, tc.wantRunning)
			}
			if diff := cmp.Diff(tc.wantEvents, w.reasons()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			wantValue := ""
			if tc.wantRunning {
				storedWl := &kueue.Workload{}
				if err := w.c.Get(t.Context(), client.ObjectKeyFromObject(w.wl), storedWl); err != nil {
					t.Fatal(err)
				}
				n, _ := preemptcost.NoticeOf(storedWl, 2*time.Minute) // its times in seconds, as the API server keeps them
				if tc.checkpoint != nil {
					n.LastCheckpoint = tc.checkpoint.Unix()
				}
				wantValue = n.Value()
				if left := w.job.noticeLeft; left <= 0 || left > n.Until.Sub(now) {
					t.Errorf("woken in %s; want at the notice's end, in %s", left, n.Until.Sub(now))
				}
			} else if w.job.noticeLeft != 0 {
				t.Errorf("a stopped job is woken for a notice in %s", w.job.noticeLeft)
			}
			if got := w.annotation(t, &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl"}}); got != wantValue {
				t.Errorf("the Workload's notice: %q; want %q", got, wantValue)
			}
			if got := w.annotation(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j-node-0-0"}}); got != wantValue {
				t.Errorf("the job's pod's notice: %q; want %q", got, wantValue)
			}
			if got := w.annotation(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "forged"}}); got != "" {
				t.Errorf("a pod that only carries the job's label was told: %q", got)
			}
		})
	}
}

// A notice is derived from Kueue's eviction, not from memory: a second
// manager (a restart, a failover) finds the same deadline and writes
// nothing new; a job's own shorter request shortens it.
func TestANoticeSurvivesARestartAndAJobMayAskForLess(t *testing.T) {
	since := time.Now().Add(-10 * time.Second)
	w := newNoticeWorld(t, `{"notice":{"seconds":120}}`, kueue.WorkloadEvictedByPreemption, since, 2, nil)
	if _, err := w.job.Stop(t.Context(), w.c, nil, jobframework.StopReasonWorkloadEvicted, ""); err != nil {
		t.Fatal(err)
	}
	first := w.annotation(t, &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl"}})
	restarted := newDeps(w.c, w.c, events.NewFakeRecorder(16), w.job.deps.opts)
	wl := &kueue.Workload{}
	if err := w.c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "wl"}, wl); err != nil {
		t.Fatal(err)
	}
	again := &TrainJob{TrainJob: w.job.TrainJob, deps: restarted, obs: &observed{workload: wl, jobs: w.job.obs.jobs}}
	if _, err := again.Stop(t.Context(), w.c, nil, jobframework.StopReasonWorkloadEvicted, ""); err != nil {
		t.Fatal(err)
	}
	if got := w.annotation(t, wl); got != first {
		t.Errorf("after a restart the notice reads %q; want it unchanged, %q", got, first)
	}
	if d := again.noticeLeft - w.job.noticeLeft; d > time.Second || d < -time.Second {
		t.Errorf("after a restart it is woken in %s; before, in %s: the notice restarted", again.noticeLeft, w.job.noticeLeft)
	}

	short := newNoticeWorld(t, `{"notice":{"seconds":120}}`, kueue.WorkloadEvictedByPreemption, since.Add(-20*time.Second), 2, nil)
	short.job.Annotations = map[string]string{names.PreemptionNoticeAnnotation: "20s"}
	if _, err := short.job.Stop(t.Context(), short.c, nil, jobframework.StopReasonWorkloadEvicted, ""); err != nil {
		t.Fatal(err)
	}
	if short.job.noticeLeft != 0 {
		t.Errorf("a job that asked for 20 s, evicted 30 s ago, runs on for %s", short.job.noticeLeft)
	}
}

// A job whose trainer succeeded in its notice is about to complete: it is
// not suspended (a suspend would race Trainer's verdict, and a job that
// finishes in its notice is not preempted at all), and is looked at again
// soon.
func TestAJobCompletingInItsNoticeIsNotStopped(t *testing.T) {
	w := newNoticeWorld(t, `{"notice":{"seconds":120}}`, kueue.WorkloadEvictedByPreemption, time.Now().Add(-10*time.Second), 0, nil)
	w.job.obs.jobs = []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](0), Succeeded: ptr.To[int32](1)}}
	w.job.obs.Roles = []podsets.Role{{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1}}
	if _, err := w.job.Stop(t.Context(), w.c, nil, jobframework.StopReasonWorkloadEvicted, ""); err != nil {
		t.Fatal(err)
	}
	stored := &trainjob.TrainJob{}
	if err := w.c.Get(t.Context(), client.ObjectKeyFromObject(&w.job.TrainJob), stored); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(stored.Spec.Suspend, false) {
		t.Error("a job completing in its notice was suspended")
	}
	if w.job.noticeLeft <= 0 || w.job.noticeLeft > completingRecheck {
		t.Errorf("looked at again in %s; want within %s", w.job.noticeLeft, completingRecheck)
	}

	w.job.obs.jobs[0].Succeeded = ptr.To[int32](0) // nothing active, nothing done: not completing
	w.job.noticeLeft = 0
	if _, err := w.job.Stop(t.Context(), w.c, nil, jobframework.StopReasonWorkloadEvicted, ""); err != nil {
		t.Fatal(err)
	}
	if err := w.c.Get(t.Context(), client.ObjectKeyFromObject(&w.job.TrainJob), stored); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(stored.Spec.Suspend, false) {
		t.Error("a job with no pod running and none done was left running in its notice")
	}
}

// A job that completes in its notice is counted and said Completed once,
// even after the job framework gave its quota back (its trainer done).
func TestAJobThatCompletesInItsNoticeIsSaidCompletedOnce(t *testing.T) {
	w := newNoticeWorld(t, `{"notice":{"seconds":120}}`, kueue.WorkloadEvictedByPreemption, time.Now().Add(-10*time.Second), 1, nil)
	if _, err := w.job.Stop(t.Context(), w.c, nil, jobframework.StopReasonWorkloadEvicted, ""); err != nil {
		t.Fatal(err)
	}
	w.job.tell()
	w.reasons()
	wl := &kueue.Workload{}
	if err := w.c.Get(t.Context(), client.ObjectKeyFromObject(w.wl), wl); err != nil {
		t.Fatal(err)
	}
	wl.Status.Conditions[0].Status = metav1.ConditionFalse // its quota given back
	w.job.obs.workload = wl
	w.job.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue, Reason: "JobSetCompleted"}}
	for range 2 {
		if _, _, finished := w.job.Finished(t.Context()); !finished {
			t.Fatal("a complete job not finished")
		}
		w.job.tell()
	}
	if diff := cmp.Diff([]string{"Normal " + ReasonPreemptionNoticeEnded}, w.reasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A checkpoint made in the notice is its outcome even when the manager
// sees it only after the notice's end (it was down): Checkpointed, not
// RanOut.
func TestACheckpointInTheNoticeSeenLateIsStillItsOutcome(t *testing.T) {
	since := time.Now().Add(-3 * time.Minute)
	checkpoint := since.Add(10 * time.Second)
	w := newNoticeWorld(t, `{"notice":{"seconds":120}}`, kueue.WorkloadEvictedByPreemption, since, 1, &checkpoint)
	if _, err := w.job.Stop(t.Context(), w.c, nil, jobframework.StopReasonWorkloadEvicted, ""); err != nil {
		t.Fatal(err)
	}
	w.job.tell()
	e := <-w.events.Events
	if !strings.Contains(e, ReasonPreemptionNoticeEnded+" "+NoticeCheckpointed+":") {
		t.Errorf("event %q; want the notice ended Checkpointed", e)
	}
}

// A notice that cannot be written on the job's pods or Workload holds all
// the same: the job runs on, woken at the notice's end (a refusal: said
// once, not tried again in this notice) or soon (a passing failure: tried
// again, the notice no longer for it); never an error, whose backoff
// could outlast the notice.
func TestANoticeNotWrittenStillHolds(t *testing.T) {
	denied := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "j-node-0-0", errors.New(`admission webhook "pods.example.com" denied the request: annotations are frozen`))
	timeout := apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "patch", 1)
	for name, tc := range map[string]struct {
		kind      client.Object // whose patch fails
		err       error
		wantRetry bool
		// wantWorkload, wantPod: the notice written there.
		wantWorkload, wantPod bool
	}{
		"the pod's patch refused":            {kind: &corev1.Pod{}, err: denied, wantWorkload: true},
		"the Workload's patch refused":       {kind: &kueue.Workload{}, err: denied, wantPod: true},
		"the pod's patch fails for a moment": {kind: &corev1.Pod{}, err: timeout, wantRetry: true, wantWorkload: true},
	} {
		t.Run(name, func(t *testing.T) {
			since := time.Now().Add(-10 * time.Second).Truncate(time.Second)
			w := newNoticeWorld(t, `{"notice":{"seconds":120}}`, kueue.WorkloadEvictedByPreemption, since, 1, nil)
			tries := 0
			c := interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					if reflect.TypeOf(obj) == reflect.TypeOf(tc.kind) {
						tries++
						return tc.err
					}
					return c.Patch(ctx, obj, patch, opts...)
				},
			})
			w.job.deps = newDeps(c, c, w.events, w.job.deps.opts)
			var said []string
			for range 2 {
				w.job.noticeLeft = 0
				wantLeft := time.Until(since.Add(2 * time.Minute)) // read before Stop: what it finds is no later
				if tc.wantRetry {
					wantLeft = tellRetry
				}
				if _, err := w.job.Stop(t.Context(), c, nil, jobframework.StopReasonWorkloadEvicted, ""); err != nil {
					t.Fatalf("Stop: %v; want the notice to hold", err)
				}
				w.job.tell()
				said = append(said, w.reasons()...)
				stored := &trainjob.TrainJob{}
				if err := w.c.Get(t.Context(), client.ObjectKeyFromObject(&w.job.TrainJob), stored); err != nil {
					t.Fatal(err)
				}
				if ptr.Deref(stored.Spec.Suspend, false) {
					t.Fatal("a job whose notice could not be written was stopped in its notice")
				}
				if left := w.job.noticeLeft; left <= 0 || left > wantLeft || left < wantLeft-5*time.Second {
					t.Errorf("woken in %s; want in %s", left, wantLeft)
				}
			}
			if want := map[bool]int{false: 1, true: 2}[tc.wantRetry]; tries != want {
				t.Errorf("the failing patch tried %d times in two reconciles; want %d", tries, want)
			}
			if diff := cmp.Diff([]string{"Warning " + ReasonPreemptionNotice, "Warning " + ReasonPreemptionNoticeNotTold}, said); diff != "" {
				t.Errorf("events over two reconciles (-want +got):\n%s", diff)
			}
			for obj, want := range map[client.Object]bool{
				&kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl"}}:     tc.wantWorkload,
				&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j-node-0-0"}}: tc.wantPod,
			} {
				if got := w.annotation(t, obj) != ""; got != want {
					t.Errorf("%T told: %v; want %v", obj, got, want)
				}
			}
		})
	}
}
