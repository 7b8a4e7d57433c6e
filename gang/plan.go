package gang

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Plan is a PodGroup we create for one wave of a job and the roles it
// labels.
type Plan struct {
	Name    string
	Roles   []string
	Gang    quota.Gang
	Timeout time.Duration
	// WorkloadAPI: a Workload API PodGroup (mode WorkloadAPI), not
	// scheduler-plugins'; Admission is the admission it is made for.
	WorkloadAPI bool
	Admission   string
}

// Request is what a job's plans are made from.
type Request struct {
	// Job is the TrainJob's name.
	Job string
	Setting
	Roles []podsets.Role
	// TrainerGang: the runtime has Trainer's coscheduling plugin make the
	// job's PodGroup (spec.podGroupPolicy.coscheduling).
	TrainerGang bool
	// Capabilities of the installed Trainer.
	Capabilities shape.Capabilities
	// Gangs are the gang schedulers whose PodGroups the cluster serves.
	Gangs Schedulers
	// Admission tells this admission from the job's earlier ones
	// (AdmissionToken): Workload API PodGroups are made per admission.
	Admission string
	// Progress of each role, by name, when the job ran before: its
	// succeeded pods are not created again and leave its gangs.
	Progress map[string]quota.Progress
}

// PlanFor plans the PodGroups a job gets from us at admission: none when it
// did not opt in, when its runtime has Trainer create one, or when its pod
// templates already name a PodGroup of the user's. refusal, when not
// empty, says why the gang asked for can't be had for what the job or its
// runtime is: the job must not start. unserved, when not empty, says that
// the cluster does not serve the gang's scheduler (an admin's set-up, not
// the job's fault, mended by an install): the job must wait.
func PlanFor(r Request) (plans []Plan, refusal, unserved string) {
	if r.TrainerGang || !Gangs(r.Mode) {
		return nil, "", ""
	}
	for i := range r.Roles {
		t := &r.Roles[i].Template
		if _, ok := t.Labels[PodGroupLabel]; ok {
			return nil, "", ""
		}
		if t.Spec.SchedulingGroup != nil {
			return nil, "", ""
		}
	}
	workloadAPI := r.Mode == WorkloadAPI
	if !r.Capabilities.PodMetadata {
		return nil, fmt.Sprintf("gang scheduling (%s: %s) needs the %s label on the pods, which Trainer's %s can't carry (Trainer v2.0); the job is not started. Use a runtime with spec.podGroupPolicy.coscheduling, upgrade Trainer to v2.1+, or, where the job asks for it itself, remove its %s annotation (a ClusterQueue's setting is its admin's to change)",
			names.GangSchedulingAnnotation, r.Mode, podLabel(workloadAPI), r.Capabilities.Field, names.GangSchedulingAnnotation), ""
	}
	if msg := unavailable(r.Mode, r.Gangs); msg != "" {
		return nil, "", msg
	}
	var timeout time.Duration
	if r.Timeout != "" {
		d, err := ValidTimeout(r.Timeout)
		if err != nil {
			return nil, fmt.Sprintf("annotation %s: %v; the job is not started", names.GangScheduleTimeoutAnnotation, err), ""
		}
		timeout = d
	}
	waves := quota.WaveGangs(r.Roles, r.Progress)
	for i, w := range waves {
		if w.MinMember == 0 {
			// Every pod of the wave succeeded before: none is created again.
			continue
		}
		last := i == len(waves)-1
		p := Plan{Name: PodGroupName(r.Job, w.Roles[0], last), Roles: w.Roles, Gang: w.Gang, Timeout: timeout}
		if workloadAPI {
			// kube-scheduler's gang has no timeout of the group's own.
			p.Name, p.Timeout, p.WorkloadAPI, p.Admission = WorkloadAPIGroupName(r.Job, w.Roles[0], last, r.Admission), 0, true, r.Admission
		}
		plans = append(plans, p)
	}
	return plans, "", ""
}

// podLabel is the pod label that puts a pod in its wave's group.
func podLabel(workloadAPI bool) string {
	if workloadAPI {
		return names.PodGroupLabel
	}
	return PodGroupLabel
}

// PodGroupName: the last wave's group is named after the job, as Trainer
// names its own; an earlier wave's `<job>.<first role>`. Neither a
// TrainJob's name nor a replicatedJob's holds a dot, so no earlier wave's
// group can be another job's (with "-", job "a"'s wave "b" and job "a-b"
// were one PodGroup, each applying over the other's). The name is a label
// value, so at most 63 characters; a longer one keeps a dot too.
func PodGroupName(job, firstRole string, last bool) string {
	if last {
		return job
	}
	return shorten(job + "." + firstRole)
}

// shorten keeps a name a label value: at most 63 characters, a longer one
// cut and told apart by a hash of the whole.
func shorten(name string) string {
	const max = 63
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := hex.EncodeToString(sum[:])[:8]
	return strings.TrimRight(name[:max-len(suffix)-1], "-.") + "." + suffix
}

// PodGroup is the object of plan p for job, to apply before the pods exist:
// a pod labelled for a PodGroup that is missing is refused by coscheduling.
// The job controls it, and our ownership label tells it from Trainer's.
func PodGroup(p Plan, job *trainjob.TrainJob) *schedv1alpha1.PodGroup {
	pg := &schedv1alpha1.PodGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: schedv1alpha1.SchemeGroupVersion.String(), Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name, Namespace: job.Namespace,
			Labels: map[string]string{names.OwnedLabel: "true"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind,
				Name: job.Name, UID: job.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: schedv1alpha1.PodGroupSpec{MinMember: p.Gang.MinMember, MinResources: p.Gang.MinResources},
	}
	if p.Timeout > 0 {
		pg.Spec.ScheduleTimeoutSeconds = ptr.To(int32(p.Timeout / time.Second))
	}
	return pg
}

// Note names the plans' PodGroups for the Injected event.
func Note(plans []Plan) string {
	if len(plans) == 0 {
		return ""
	}
	parts := make([]string, len(plans))
	for i, p := range plans {
		parts[i] = fmt.Sprintf("%s (%s, %d pods)", p.Name, strings.Join(p.Roles, ", "), p.Gang.MinMember)
	}
	kind := "PodGroups "
	if plans[0].WorkloadAPI {
		kind = "PodGroups (scheduling.k8s.io/v1beta1) "
	}
	return "; gang scheduled as " + kind + strings.Join(parts, ", ")
}

// WithPodGroupLabels adds each role's PodGroup label to its injection.
// Kueue's label maps are shared with its PodSetInfo: copied, never written.
func WithPodGroupLabels(want []shape.Injection, plans []Plan) {
	group, workloadAPI := map[string]string{}, map[string]bool{}
	for _, p := range plans {
		for _, r := range p.Roles {
			group[r], workloadAPI[r] = p.Name, p.WorkloadAPI
		}
	}
	for i := range want {
		name, ok := group[want[i].Name]
		if !ok {
			continue
		}
		labels := make(map[string]string, len(want[i].Labels)+1)
		for k, v := range want[i].Labels {
			labels[k] = v
		}
		labels[podLabel(workloadAPI[want[i].Name])] = name
		want[i].Labels = labels
	}
}

// TimeoutConflict says, for a Warning event, when Kueue's waitForPodsReady
// (timeouts w) would evict the job before coscheduling gives up on its
// gang; "" when it would not. trainerGang is the runtime's coscheduling
// policy, nil when it has none.
func TimeoutConflict(roles []podsets.Role, trainerGang *trainer.CoschedulingPodGroupPolicySource, plans []Plan, w quota.PodsReadyTimeouts) string {
	var timeout time.Duration
	var where string
	switch {
	case trainerGang != nil:
		timeout = time.Duration(ptr.Deref(trainerGang.ScheduleTimeoutSeconds, 0)) * time.Second
		if timeout == 0 {
			timeout = trainerDefaultScheduleTimeout
		}
		where = "the runtime's spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds"
	case len(plans) > 0 && plans[0].WorkloadAPI:
		// kube-scheduler's gang waits as long as its scheduler does: no
		// timeout of ours to weigh against Kueue's.
		return ""
	case len(plans) > 0:
		timeout = plans[0].Timeout
		where = "annotation " + names.GangScheduleTimeoutAnnotation
	default:
		return ""
	}
	_, waves := quota.Waves(roles)
	conflicts := quota.TimeoutConflicts(timeout, w, waves)
	if len(conflicts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: whenever its gang has to wait for room, Kueue evicts the job before the scheduler gives up on the gang, on every attempt, so it can't become ready until room is free the moment it is admitted. Make Kueue's waitForPodsReady timeouts longer than the gang's schedule timeout, or lower %s",
		strings.Join(conflicts, "; "), where)
}
