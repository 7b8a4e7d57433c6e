package gang

import (
	"github.com/trainjob-kueue/trainjob-kueue/names"

	"fmt"
	"strconv"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
)

// Gang scheduling for runtimes without podGroupPolicy: an opt-in a batch
// admin sets on a ClusterQueue (every TrainJob it admits) or a user on a
// TrainJob.
const (
	// Coscheduling: scheduler-plugins' PodGroups (scheduling.x-k8s.io), for
	// its coscheduling plugin.
	Coscheduling = "coscheduling"
	// WorkloadAPI: the Workload API's PodGroups (scheduling.k8s.io/v1beta1,
	// Kubernetes 1.37 with the GenericWorkload gate), which kube-scheduler
	// itself places whole.
	WorkloadAPI = "workload-api"
	None        = "none"

	// PodGroupLabel puts a pod in a coscheduling PodGroup.
	PodGroupLabel = schedv1alpha1.PodGroupLabel
	// trainerDefaultScheduleTimeout is what Trainer's CRD defaults
	// podGroupPolicy.coscheduling.scheduleTimeoutSeconds to.
	trainerDefaultScheduleTimeout = 60 * time.Second
)

// Reasons of gang scheduling events.
const (
	// ReasonGangResized: the PodGroup of Trainer's coscheduling plugin was
	// sized for the wave of roles being placed.
	ReasonGangResized = "GangResized"
	// ReasonGangUnsupported: gang scheduling was asked for and can't be
	// carried out here; the job is not started.
	ReasonGangUnsupported = "GangUnsupported"
	// ReasonGangTimeoutConflict: Kueue's waitForPodsReady evicts the job
	// before coscheduling gives up on its gang.
	ReasonGangTimeoutConflict = "GangTimeoutConflict"
	// ReasonPodGroupNotWritten: a PodGroup of the job's gang could not be
	// written (refused by an admission webhook or policy, another's under
	// its name): the job waits, started by none, and the write is retried.
	ReasonPodGroupNotWritten = "PodGroupNotWritten"
	// ReasonPodGroupRemade: a PodGroup of a running admission was gone
	// and was made again.
	ReasonPodGroupRemade = "PodGroupRemade"
	// ReasonInvalidGangScheduling: a ClusterQueue's gang annotation has a
	// value we don't know (a TrainJob's is refused by the webhook).
	ReasonInvalidGangScheduling = "InvalidGangScheduling"
)

// ValidMode checks a names.GangSchedulingAnnotation value.
func ValidMode(v string) error {
	if v == None || Gangs(v) {
		return nil
	}
	return fmt.Errorf("%q is not a gang scheduling mode: use %q, %q or %q", v, Coscheduling, WorkloadAPI, None)
}

// Gangs: mode gang schedules a job's pods.
func Gangs(mode string) bool { return mode == Coscheduling || mode == WorkloadAPI }

// ValidTimeout checks a names.GangScheduleTimeoutAnnotation value.
func ValidTimeout(v string) (time.Duration, error) {
	s, err := strconv.ParseInt(v, 10, 32)
	if err != nil || s < 1 {
		return 0, fmt.Errorf("%q is not a whole number of seconds of at least 1", v)
	}
	return time.Duration(s) * time.Second, nil
}

// Setting is the gang scheduling a job starts with.
type Setting struct {
	Mode string
	// Timeout is the annotation's value, checked when a plan is made.
	Timeout string
}

// SettingOf decides a job's setting from its annotations and those of the
// ClusterQueue that admitted it (nil for none). A batch admin's
// ClusterQueue setting binds every job it admits: a job may opt in itself,
// never out of its ClusterQueue's. The timeout is the job's, else the
// ClusterQueue's. warnings say which of the ClusterQueue's values were
// ignored, and why.
func SettingOf(job map[string]string, cq *kueue.ClusterQueue) (s Setting, warnings []string) {
	s = Setting{Mode: job[names.GangSchedulingAnnotation], Timeout: job[names.GangScheduleTimeoutAnnotation]}
	if cq == nil {
		return s, nil
	}
	cqMode := cq.Annotations[names.GangSchedulingAnnotation]
	if err := ValidMode(cqMode); cqMode != "" && err != nil {
		warnings = append(warnings, fmt.Sprintf("ClusterQueue %s: annotation %s: %v; the job starts without the ClusterQueue's gang scheduling", cq.Name, names.GangSchedulingAnnotation, err))
		cqMode = ""
	}
	if v := cq.Annotations[names.GangScheduleTimeoutAnnotation]; s.Timeout == "" && v != "" {
		if _, err := ValidTimeout(v); err != nil {
			warnings = append(warnings, fmt.Sprintf("ClusterQueue %s: annotation %s: %v; the job's PodGroups get the scheduler's default timeout", cq.Name, names.GangScheduleTimeoutAnnotation, err))
		} else {
			s.Timeout = v
		}
	}
	s.Mode = Mode(s.Mode, cqMode)
	return s, warnings
}

// Mode: admins decide, users may only opt in. A ClusterQueue that gang
// schedules does so for every job it admits, whatever the job says, and in
// its own mode: the scheduler that places its jobs is the admin's choice.
func Mode(jobMode, clusterQueueMode string) string {
	if Gangs(clusterQueueMode) {
		return clusterQueueMode
	}
	return jobMode
}
