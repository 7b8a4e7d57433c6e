package overview

import (
	"cmp"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/jobworkload"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Row is one TrainJob at a glance.
type Row struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Queue is the LocalQueue; ClusterQueue the one it leads to ("" when
	// unknown).
	Queue        string `json:"queue,omitempty"`
	ClusterQueue string `json:"clusterQueue,omitempty"`
	// State is the job's lifecycle state, in the words the metric and
	// explain use.
	State lifecycle.State `json:"state"`
	// Why says more about the state where it helps (who manages a job
	// that is not queued, what holds it, why it failed, where it runs):
	// the lifecycle's detail.
	Why string `json:"why,omitempty"`
	// Position in the ClusterQueue's pending workloads (0 is the head),
	// from Kueue's visibility API; nil when not pending or not served.
	Position *int32 `json:"position,omitempty"`
	// Flavors assigned, sorted; none while pending.
	Flavors []string `json:"flavors,omitempty"`
	// PodsRunning of Pods: the job's running pods, and how many its
	// Workload books.
	PodsRunning int32 `json:"podsRunning"`
	Pods        int32 `json:"pods"`
	// GPUs booked (nvidia.com/gpu and the like, summed over the pods).
	GPUs int64 `json:"gpus"`
	// Waited is from creation to admission, or to now while not admitted;
	// WaitedSeconds the same for machines.
	Waited        time.Duration `json:"-"`
	WaitedSeconds int64         `json:"waitedSeconds"`
	// Preemptions: how often Kueue preempted the job's Workload.
	Preemptions int32 `json:"preemptions"`
	// ExpectedStart is when a waiting job is expected to start, filled by
	// the caller (explain.Forecasts plays its ClusterQueue forward); nil
	// when not waiting or not computed.
	ExpectedStart *forecast.ExpectedStart `json:"expectedStart,omitempty"`
	// Priority is the Workload's effective priority, as Kueue orders and
	// preempts by it: its priority plus the boost of a preemption-cost
	// policy; nil without a Workload.
	Priority *int64 `json:"priority,omitempty"`
}

// Input is what Rows computes from: every kind listed once.
type Input struct {
	Jobs      []trainjob.TrainJob
	Workloads []kueue.Workload
	// LocalQueues by "namespace/name".
	LocalQueues map[string]*kueue.LocalQueue
	// RunningPods maps "namespace/jobset" to its running pods.
	RunningPods map[string]int32
	// Positions maps "namespace/workload" to its position in its
	// ClusterQueue, where Kueue's visibility API answered.
	Positions map[string]int32
	// ManageJobsWithoutQueueName: Kueue queues unlabelled jobs too.
	ManageJobsWithoutQueueName bool
	Now                        time.Time
	// ClaimTemplates are the DRA devices of each ResourceClaimTemplate, by
	// namespace and name; nil where no job claims through one.
	ClaimTemplates map[string]map[string]quota.Devices
}

// Rows is the table of in's jobs, sorted by namespace and name.
func Rows(in Input) []Row {
	index := jobworkload.NewIndex(in.Workloads)
	rows := make([]Row, 0, len(in.Jobs))
	for i := range in.Jobs {
		rows = append(rows, row(&in.Jobs[i], index.Of(&in.Jobs[i]), in))
	}
	slices.SortFunc(rows, func(a, b Row) int { return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name)) })
	return rows
}

func row(job *trainjob.TrainJob, wl *kueue.Workload, in Input) Row {
	r := Row{Namespace: job.Namespace, Name: job.Name, Queue: job.Labels[constants.QueueLabel]}
	if r.Queue != "" {
		if lq := in.LocalQueues[job.Namespace+"/"+r.Queue]; lq != nil {
			r.ClusterQueue = string(lq.Spec.ClusterQueue)
		}
	}
	r.PodsRunning = in.RunningPods[job.Namespace+"/"+job.Name]
	st := lifecycle.Of(lifecycle.Observed{Job: job, Workload: wl, ManageJobsWithoutQueueName: in.ManageJobsWithoutQueueName})
	r.State = st.State
	r.Why = st.Detail
	if st.State == lifecycle.NotQueued {
		return r
	}
	admittedAt := time.Time{}
	if wl != nil {
		r.Pods, r.GPUs = booked(wl, in.ClaimTemplates[wl.Namespace])
		r.Preemptions = preemptcost.Preemptions(wl)
		r.Priority = ptr.To(int64(ptr.Deref(wl.Spec.Priority, 0)) + int64(preemptcost.BoostValue(wl)))
		if adm := wl.Status.Admission; adm != nil {
			r.ClusterQueue = string(adm.ClusterQueue)
			r.Flavors = flavors(adm)
		}
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue {
			admittedAt = c.LastTransitionTime.Time
		}
		if p, ok := in.Positions[wl.Namespace+"/"+wl.Name]; ok {
			r.Position = ptr.To(p)
		}
	}
	end := in.Now
	if !admittedAt.IsZero() {
		end = admittedAt
	}
	r.Waited = max(end.Sub(job.CreationTimestamp.Time), 0).Round(time.Second)
	r.WaitedSeconds = int64(r.Waited / time.Second)
	if !showsPosition(st.State) {
		r.Position = nil
	}
	return r
}

// booked is how many pods the Workload books, and their GPUs: extended
// resources, and DRA devices of GPU classes its pods claim through
// ResourceClaimTemplates (its namespace's, by name).
func booked(wl *kueue.Workload, templates map[string]quota.Devices) (pods int32, gpus int64) {
	for _, ps := range wl.Spec.PodSets {
		pods += ps.Count
		devices, _ := quota.PodDevices(&ps.Template.Spec, templates)
		per := devices.GPUs()
		for _, c := range ps.Template.Spec.Containers {
			per += gpusOf(c.Resources.Requests)
		}
		// Init containers run before the others: the larger of the two.
		for _, c := range ps.Template.Spec.InitContainers {
			per = max(per, gpusOf(c.Resources.Requests))
		}
		gpus += per * int64(ps.Count)
	}
	return pods, gpus
}

// gpuResources are the extended resources counted as GPUs.
var gpuResources = []corev1.ResourceName{"nvidia.com/gpu", "amd.com/gpu"}

func gpusOf(requests corev1.ResourceList) int64 {
	var n int64
	for _, name := range gpuResources {
		if q, ok := requests[name]; ok {
			n += q.Value()
		}
	}
	return n
}

// flavors are the distinct flavors of an admission, sorted.
func flavors(adm *kueue.Admission) []string {
	set := map[string]bool{}
	for _, a := range adm.PodSetAssignments {
		for _, f := range a.Flavors {
			set[string(f)] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
