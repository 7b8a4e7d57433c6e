package explain

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Input is everything explain looks at, fetched by the caller.
type Input struct {
	// Job is "namespace/name".
	Job string
	// TrainJob is the job as read (its state's part of it: Trainer's
	// verdict, spec.suspend, spec.managedBy); nil for a job queued and
	// suspended.
	TrainJob *trainjob.TrainJob
	Roles    []podsets.Role
	// LocalQueue named by the job; "" when it has no queue-name label.
	LocalQueue string
	// Queue is nil when the LocalQueue or its ClusterQueue does not exist.
	Queue *forecast.Queue
	// Workload is nil for a job not queued yet or a manifest not created.
	Workload *kueue.Workload
	// Position in the queues from Kueue's visibility API, if it answered.
	Position *Position
	// PositionNote says why the position is unknown.
	PositionNote string
	// RuntimeFrom names where Roles came from when it is not the live
	// runtime: Trainer's snapshot of it (v2.3).
	RuntimeFrom string
	// Priority: the ClusterQueue's preemption-cost policy and its peers;
	// nil when not read.
	Priority *priorityInput
	// DRA: what the roles claim through ResourceClaimTemplates; nil when
	// none does (or they can't be read).
	DRA *draInput
	// Expected is the job's expected start while it waits (Forecasts);
	// ExpectedNote why there is none.
	Expected     *forecast.ExpectedStart
	ExpectedNote string
}

// Explanation answers a batch admin's questions about one TrainJob.
type Explanation struct {
	Job          string `json:"trainJob"`
	LocalQueue   string `json:"localQueue,omitempty"`
	ClusterQueue string `json:"clusterQueue,omitempty"`
	Cohort       string `json:"cohort,omitempty"`
	// State is the job's lifecycle state, in the words list and the
	// metric use.
	State lifecycle.State `json:"state"`
	// RuntimeFrom: the roles were computed from Trainer's snapshot of the
	// runtime (v2.3), not the live runtime.
	RuntimeFrom  string            `json:"runtimeFrom,omitempty"`
	Roles        []roleExplanation `json:"roles"`
	Quota        []quotaLine       `json:"quota,omitempty"`
	Position     *Position         `json:"position,omitempty"`
	PositionNote string            `json:"positionNote,omitempty"`
	// DRAMissing are the ResourceClaimTemplates the roles name that do
	// not exist in the job's namespace.
	DRAMissing []string `json:"draMissingTemplates,omitempty"`
	// KueueSays is Kueue's own message on the Workload, when pending.
	KueueSays string `json:"kueueSays,omitempty"`
	// PreemptedBy is Kueue's word on the preemption the job, pending,
	// waits after: the preemptor and the effective priorities compared.
	PreemptedBy string `json:"preemptedBy,omitempty"`
	// ExpectedStart is when a waiting job is expected to start (Forecast);
	// nil when not waiting, or not computed (ExpectedNote says why).
	ExpectedStart *forecast.ExpectedStart `json:"expectedStart,omitempty"`
	ExpectedNote  string                  `json:"expectedNote,omitempty"`
	// Priority under the ClusterQueue's preemption-cost policy.
	Priority *priorityExplanation `json:"priority,omitempty"`
	Verdict  string               `json:"verdict"`
}

// roleExplanation is one role's demand and where it goes.
type roleExplanation struct {
	Name   string              `json:"name"`
	Count  int32               `json:"count"`
	PerPod corev1.ResourceList `json:"perPod"`
	Total  corev1.ResourceList `json:"total"`
	// Flavors assigned at admission, per resource.
	Flavors map[corev1.ResourceName]string `json:"flavors,omitempty"`
	// Candidates considered now, for a job not admitted.
	Candidates []forecast.Candidate `json:"candidates,omitempty"`
	// DRA devices the role's pods claim through ResourceClaimTemplates.
	DRA []DRADevices `json:"dra,omitempty"`
}

// quotaLine is one flavor's resource in the ClusterQueue.
type quotaLine struct {
	Flavor         string              `json:"flavor"`
	Resource       corev1.ResourceName `json:"resource"`
	Nominal        resource.Quantity   `json:"nominal"`
	BorrowingLimit *resource.Quantity  `json:"borrowingLimit,omitempty"`
	Used           resource.Quantity   `json:"used"`
	CohortLends    resource.Quantity   `json:"cohortLends"`
}

func quotaLines(q *forecast.Queue) []quotaLine {
	used := forecast.Used(q.ClusterQueue.Status.FlavorsReservation)
	var out []quotaLine
	for _, rg := range q.ClusterQueue.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			for _, r := range fq.Resources {
				l := quotaLine{Flavor: string(fq.Name), Resource: r.Name, Nominal: r.NominalQuota, Used: used[string(fq.Name)][r.Name]}
				if r.BorrowingLimit != nil {
					l.BorrowingLimit = ptr.To(r.BorrowingLimit.DeepCopy())
				}
				if q.ClusterQueue.Spec.CohortName != "" {
					l.CohortLends = q.CohortLends[string(fq.Name)][r.Name]
				}
				out = append(out, l)
			}
		}
	}
	return out
}
