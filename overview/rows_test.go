package overview

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

var (
	created = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	now     = created.Add(10 * time.Minute)
)

func job(name string, edit ...func(*trainjob.TrainJob)) trainjob.TrainJob {
	j := trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name),
		CreationTimestamp: metav1.NewTime(created), Labels: map[string]string{"kueue.x-k8s.io/queue-name": "lq"}}}
	j.Spec.Suspend = ptr.To(true)
	for _, e := range edit {
		e(&j)
	}
	return j
}

func running(j *trainjob.TrainJob) { j.Spec.Suspend = ptr.To(false) }

// workloadName is the name the job framework gives job's Workload (the
// job's UID is its name here, in any namespace).
func workloadName(job string) string {
	key, _ := jobworkload.Key(&trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: job, UID: types.UID(job)}})
	return key.Name
}

// workload of job: two trainer pods of 8 GPUs each, with conds.
func workload(job string, edit func(*kueue.Workload), conds ...metav1.Condition) kueue.Workload {
	wl := kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: workloadName(job),
		OwnerReferences: []metav1.OwnerReference{{Kind: "TrainJob", Name: job, UID: types.UID(job), Controller: ptr.To(true)}}}}
	wl.Spec.PodSets = []kueue.PodSet{{Name: "node", Count: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8"), corev1.ResourceCPU: resource.MustParse("4")}},
	}}}}}}
	wl.Status.Conditions = conds
	if edit != nil {
		edit(&wl)
	}
	return wl
}

func cond(t string, at time.Time, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at)}
}

func admittedTo(flavors ...string) func(*kueue.Workload) {
	return func(wl *kueue.Workload) {
		a := kueue.PodSetAssignment{Name: "node", Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{}}
		for i, f := range flavors {
			a.Flavors[corev1.ResourceName([]string{"nvidia.com/gpu", "cpu"}[i])] = kueue.ResourceFlavorReference(f)
		}
		wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{a}}
	}
}

func TestRows(t *testing.T) {
	admitted := []metav1.Condition{cond(kueue.WorkloadQuotaReserved, created.Add(time.Minute), "QuotaReserved"), cond(kueue.WorkloadAdmitted, created.Add(time.Minute), "Admitted")}
	preempted := func(wl *kueue.Workload) {
		wl.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{
			{Reason: kueue.WorkloadEvictedByPreemption, Count: 2}, {Reason: kueue.WorkloadEvictedByPodsReadyTimeout, Count: 1}}}
	}
	held := func(key, value string) func(*kueue.Workload) {
		return func(wl *kueue.Workload) {
			wl.Annotations = map[string]string{key: value}
			wl.Spec.Active = ptr.To(false)
		}
	}
	base := Row{Namespace: "ns", Queue: "lq", ClusterQueue: "cq", Pods: 2, GPUs: 16}
	with := func(name string, s lifecycle.State, edit func(*Row)) Row {
		r := base
		r.Name, r.State, r.Priority = name, s, ptr.To[int64](0)
		if edit != nil {
			edit(&r)
		}
		r.WaitedSeconds = int64(r.Waited / time.Second)
		return r
	}
	cases := map[string]struct {
		job  trainjob.TrainJob
		wl   *kueue.Workload
		pods int32 // running
		want Row
	}{
		"no queue label": {
			job:  job("a", func(j *trainjob.TrainJob) { j.Labels = nil }),
			want: Row{Namespace: "ns", Name: "a", State: lifecycle.NotQueued, Why: "no kueue.x-k8s.io/queue-name label"},
		},
		"managed by another controller": {
			job:  job("a", func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To("example.com/other") }),
			want: Row{Namespace: "ns", Name: "a", Queue: "lq", ClusterQueue: "cq", State: lifecycle.NotQueued, Why: "managed by example.com/other"},
		},
		"queued, third in its ClusterQueue": {
			job: job("a"), wl: ptr.To(workload("a", nil)),
			want: with("a", lifecycle.Queued, func(r *Row) { r.Position, r.Waited = ptr.To[int32](2), 10*time.Minute }),
		},
		"admitted, not yet started": {
			job: job("a"), wl: ptr.To(workload("a", admittedTo("a100", "cpu-pool"), admitted...)),
			want: with("a", lifecycle.Admitted, func(r *Row) { r.Flavors, r.Waited = []string{"a100", "cpu-pool"}, time.Minute }),
		},
		"running, one pod up": {
			job: job("a", running), wl: ptr.To(workload("a", admittedTo("a100"), admitted...)), pods: 1,
			want: with("a", lifecycle.Running, func(r *Row) { r.Flavors, r.Waited, r.PodsRunning = []string{"a100"}, time.Minute, 1 }),
		},
		"held for its runtime": {
			job: job("a"), wl: ptr.To(workload("a", held(names.HeldForRuntimeAnnotation, "TrainingRuntime ns/torch"))),
			want: with("a", lifecycle.WaitingForRuntime, func(r *Row) { r.Why, r.Waited = "TrainingRuntime ns/torch", 10*time.Minute }),
		},
		"held for an admission policy": {
			job: job("a"), wl: ptr.To(workload("a", held(names.HeldByPolicyAnnotation, `{"policy":"p"}`))),
			want: with("a", lifecycle.HeldByPolicy, func(r *Row) { r.Why, r.Waited = "ValidatingAdmissionPolicy p", 10*time.Minute }),
		},
		"preempted twice, waiting again": {
			job: job("a"), wl: ptr.To(workload("a", preempted)),
			want: with("a", lifecycle.Requeued, func(r *Row) {
				r.Preemptions, r.Position, r.Waited, r.Why = 2, ptr.To[int32](2), 10*time.Minute, "Preempted"
			}),
		},
		"finished": {
			job: job("a", running, func(j *trainjob.TrainJob) {
				j.Status.Conditions = []metav1.Condition{cond("Complete", now, "JobSetCompleted")}
			}),
			wl:   ptr.To(workload("a", admittedTo("a100"), admitted...)),
			want: with("a", lifecycle.Finished, func(r *Row) { r.Flavors, r.Waited = []string{"a100"}, time.Minute }),
		},
		"failed to start": {
			job:  job("a"),
			wl:   ptr.To(workload("a", nil, cond(kueue.WorkloadFinished, now, "FailedToStart"))),
			want: with("a", lifecycle.Failed, func(r *Row) { r.Why, r.Waited = "", 10*time.Minute }),
		},
		"dispatched by MultiKueue, running on a worker": {
			job: job("a", func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To(kueue.MultiKueueControllerName) }),
			wl: ptr.To(workload("a", func(wl *kueue.Workload) {
				admittedTo("a100")(wl)
				wl.Status.ClusterName = ptr.To("worker1")
			}, admitted...)),
			want: with("a", lifecycle.Running, func(r *Row) { r.Flavors, r.Waited, r.Why = []string{"a100"}, time.Minute, "on worker cluster worker1" }),
		},
		// Its effective priority: its priority and a policy's boost.
		"boosted": {job: job("a"), wl: ptr.To(workload("a", func(wl *kueue.Workload) {
			admittedTo("a100")(wl)
			wl.Spec.Priority = ptr.To[int32](100)
			wl.Annotations = map[string]string{"kueue.x-k8s.io/priority-boost": "720"}
		}, admitted...)),
			want: with("a", lifecycle.Admitted, func(r *Row) { r.Flavors, r.Waited, r.Priority = []string{"a100"}, time.Minute, ptr.To[int64](820) }),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := Input{Jobs: []trainjob.TrainJob{tc.job}, Now: now,
				LocalQueues: map[string]*kueue.LocalQueue{"ns/lq": {Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}}, RunningPods: map[string]int32{"ns/a": tc.pods},
				Positions: map[string]int32{"ns/" + workloadName("a"): 2}}
			if tc.wl != nil {
				in.Workloads = []kueue.Workload{*tc.wl}
			}
			got := Rows(in)
			if len(got) != 1 {
				t.Fatalf("%d rows, want 1", len(got))
			}
			if diff := cmp.Diff(tc.want, got[0]); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
