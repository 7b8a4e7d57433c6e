package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Gang scheduling for runtimes without podGroupPolicy: an opt-in a batch
// admin sets on a ClusterQueue (every TrainJob it admits) or a user on a
// TrainJob, whose value wins.
const (
	// AnnotationGangScheduling: "coscheduling" makes trainjob-kueue create a
	// scheduler-plugins PodGroup per wave of the job's roles at admission
	// and label the pods through the overrides. A ClusterQueue's setting
	// binds every job it admits; "none" on a TrainJob only says it does not
	// opt in itself.
	AnnotationGangScheduling = "trainjob-kueue.dev/gang-scheduling"
	// AnnotationGangScheduleTimeout is the scheduleTimeoutSeconds of those
	// PodGroups; without it coscheduling's permitWaitingTimeSeconds applies.
	AnnotationGangScheduleTimeout = "trainjob-kueue.dev/gang-schedule-timeout-seconds"

	GangCoscheduling = "coscheduling"
	GangNone         = "none"

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
	// ReasonInvalidGangScheduling: a ClusterQueue's gang annotation has a
	// value we don't know (a TrainJob's is refused by the webhook).
	ReasonInvalidGangScheduling = "InvalidGangScheduling"
)

// validGangValue checks an AnnotationGangScheduling value.
func validGangValue(v string) error {
	if v == GangCoscheduling || v == GangNone {
		return nil
	}
	return fmt.Errorf("%q is not a gang scheduling mode: use %q or %q", v, GangCoscheduling, GangNone)
}

// validGangTimeout checks an AnnotationGangScheduleTimeout value.
func validGangTimeout(v string) (time.Duration, error) {
	s, err := strconv.ParseInt(v, 10, 32)
	if err != nil || s < 1 {
		return 0, fmt.Errorf("%q is not a whole number of seconds of at least 1", v)
	}
	return time.Duration(s) * time.Second, nil
}

// podGroupPlan is a PodGroup we create for one wave and the roles it labels.
type podGroupPlan struct {
	name    string
	roles   []string
	gang    quota.Gang
	timeout time.Duration
}

// gangSetting is the gang scheduling a job starts with. A batch admin's
// ClusterQueue setting binds every job it admits: a job may opt in itself,
// never out of its ClusterQueue's (gangMode). The timeout is the job's,
// else the ClusterQueue's. A ClusterQueue that can't be read is an error,
// not "no setting": the job would start without the gang it must have.
func (t *TrainJob) gangSetting(ctx context.Context) (mode string, timeout string, err error) {
	jobMode, timeout := t.Annotations[AnnotationGangScheduling], t.Annotations[AnnotationGangScheduleTimeout]
	wl := t.reservedWorkload(ctx)
	if wl == nil || wl.Status.Admission == nil {
		return jobMode, timeout, nil
	}
	cq := &kueue.ClusterQueue{}
	if err := t.deps.client.Get(ctx, client.ObjectKey{Name: string(wl.Status.Admission.ClusterQueue)}, cq); err != nil {
		if apierrors.IsNotFound(err) {
			return jobMode, timeout, nil
		}
		return "", "", fmt.Errorf("reading ClusterQueue %s for its gang scheduling: %w", wl.Status.Admission.ClusterQueue, err)
	}
	cqMode := cq.Annotations[AnnotationGangScheduling]
	if err := validGangValue(cqMode); cqMode != "" && err != nil {
		t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeWarning, ReasonInvalidGangScheduling, actionGang,
			"ClusterQueue %s: annotation %s: %v; the job starts without the ClusterQueue's gang scheduling", cq.Name, AnnotationGangScheduling, err)
		cqMode = ""
	}
	if v := cq.Annotations[AnnotationGangScheduleTimeout]; timeout == "" && v != "" {
		if _, err := validGangTimeout(v); err != nil {
			t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeWarning, ReasonInvalidGangScheduling, actionGang,
				"ClusterQueue %s: annotation %s: %v; the job's PodGroups get the scheduler's default timeout", cq.Name, AnnotationGangScheduleTimeout, err)
		} else {
			timeout = v
		}
	}
	return gangMode(jobMode, cqMode), timeout, nil
}

// gangMode: admins decide, users may only opt in. A ClusterQueue that gang
// schedules does so for every job it admits, whatever the job says.
func gangMode(jobMode, clusterQueueMode string) string {
	if clusterQueueMode == GangCoscheduling {
		return GangCoscheduling
	}
	return jobMode
}

// ownGangs plans the PodGroups this job gets from us at admission: none
// when it did not opt in, when its runtime has Trainer create one, or when
// its pod templates already name a PodGroup of the user's.
func (t *TrainJob) ownGangs(ctx context.Context) ([]podGroupPlan, error) {
	if t.coscheduling != nil {
		return nil, nil
	}
	mode, timeoutValue, err := t.gangSetting(ctx)
	if err != nil {
		return nil, err
	}
	if mode != GangCoscheduling {
		return nil, nil
	}
	for i := range t.roles {
		if _, ok := t.roles[i].Template.Labels[PodGroupLabel]; ok {
			return nil, nil
		}
	}
	refuse := func(msg string) error {
		t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeWarning, ReasonGangUnsupported, actionGang, "%s", msg)
		return &reasonError{ReasonGangUnsupported, podset.BadPodSetsUpdateError("labels", errors.New(msg))}
	}
	if _, v20 := t.deps.opts.Shape.(shape.PodSpecOverrides); v20 {
		return nil, refuse(fmt.Sprintf("gang scheduling (%s: %s) needs the %s label on the pods, which Trainer v2.0's spec.podSpecOverrides can't carry; the job is not started. Use a runtime with spec.podGroupPolicy.coscheduling, upgrade Trainer to v2.1+, or, where the job asks for it itself, remove its %s annotation (a ClusterQueue's setting is its admin's to change)",
			AnnotationGangScheduling, mode, PodGroupLabel, AnnotationGangScheduling))
	}
	if !t.deps.opts.PodGroups {
		return nil, refuse(fmt.Sprintf("gang scheduling (%s: %s) needs scheduler-plugins' PodGroup CRD (podgroups.scheduling.x-k8s.io), which is not installed; the job is not started. Install scheduler-plugins with its coscheduling plugin (and restart trainjob-kueue), or, where the job asks for it itself, remove its %s annotation (a ClusterQueue's setting is its admin's to change)",
			AnnotationGangScheduling, mode, AnnotationGangScheduling))
	}
	var timeout time.Duration
	if timeoutValue != "" {
		d, err := validGangTimeout(timeoutValue)
		if err != nil {
			return nil, refuse(fmt.Sprintf("annotation %s: %v; the job is not started", AnnotationGangScheduleTimeout, err))
		}
		timeout = d
	}
	waves := quota.WaveGangs(t.roles)
	plans := make([]podGroupPlan, len(waves))
	for i, w := range waves {
		plans[i] = podGroupPlan{name: podGroupName(t.Name, w.Roles[0], i == len(waves)-1), roles: w.Roles, gang: w.Gang, timeout: timeout}
	}
	return plans, nil
}

// podGroupName: the last wave's group is named after the job, as Trainer
// names its own; an earlier wave's `<job>.<first role>`. Neither a
// TrainJob's name nor a replicatedJob's holds a dot, so no earlier wave's
// group can be another job's (with "-", job "a"'s wave "b" and job "a-b"
// were one PodGroup, each applying over the other's). The name is a label
// value, so at most 63 characters; a longer one keeps a dot too.
func podGroupName(job, firstRole string, last bool) string {
	if last {
		return job
	}
	name := job + "." + firstRole
	if len(name) <= validation.LabelValueMaxLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := hex.EncodeToString(sum[:])[:8]
	return strings.TrimRight(name[:validation.LabelValueMaxLength-len(suffix)-1], "-.") + "." + suffix
}

// applyPodGroups creates or updates our PodGroups before the pods exist:
// a pod labelled for a PodGroup that is missing is refused by coscheduling.
func (t *TrainJob) applyPodGroups(ctx context.Context, plans []podGroupPlan) error {
	for _, p := range plans {
		pg := &schedv1alpha1.PodGroup{
			TypeMeta: metav1.TypeMeta{APIVersion: schedv1alpha1.SchemeGroupVersion.String(), Kind: "PodGroup"},
			ObjectMeta: metav1.ObjectMeta{
				Name: p.name, Namespace: t.Namespace,
				Labels: map[string]string{shape.OwnedLabel: "true"},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind,
					Name: t.Name, UID: t.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
				}},
			},
			Spec: schedv1alpha1.PodGroupSpec{MinMember: p.gang.MinMember, MinResources: p.gang.MinResources},
		}
		if p.timeout > 0 {
			pg.Spec.ScheduleTimeoutSeconds = ptr.To(int32(p.timeout / time.Second))
		}
		//nolint:staticcheck // server-side apply of a typed object
		if err := t.deps.client.Patch(ctx, pg, client.Apply, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying PodGroup %s/%s for roles %s: %w", t.Namespace, p.name, strings.Join(p.roles, ","), err)
		}
		t.deps.metrics.gang(gangCreated)
	}
	return nil
}

// gangNote names our PodGroups for the Injected event.
func gangNote(plans []podGroupPlan) string {
	if len(plans) == 0 {
		return ""
	}
	parts := make([]string, len(plans))
	for i, p := range plans {
		parts[i] = fmt.Sprintf("%s (%s, %d pods)", p.name, strings.Join(p.roles, ", "), p.gang.MinMember)
	}
	return "; gang scheduled as PodGroups " + strings.Join(parts, ", ")
}

// fieldOwner is our field manager for objects we apply.
const fieldOwner = "trainjob-kueue"

// withPodGroupLabels adds each role's PodGroup label to its injection.
func withPodGroupLabels(want []shape.Injection, plans []podGroupPlan) {
	group := map[string]string{}
	for _, p := range plans {
		for _, r := range p.roles {
			group[r] = p.name
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
		labels[PodGroupLabel] = name
		want[i].Labels = labels
	}
}

// warnGangTimeouts says, once per start, when Kueue's waitForPodsReady
// would evict the job before coscheduling gives up on its gang.
func (t *TrainJob) warnGangTimeouts(plans []podGroupPlan) {
	if !t.deps.opts.WaitForPodsReady {
		return
	}
	var timeout time.Duration
	var where string
	switch {
	case t.coscheduling != nil:
		timeout = time.Duration(ptr.Deref(t.coscheduling.ScheduleTimeoutSeconds, 0)) * time.Second
		if timeout == 0 {
			timeout = trainerDefaultScheduleTimeout
		}
		where = "the runtime's spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds"
	case len(plans) > 0:
		timeout = plans[0].timeout
		where = "annotation " + AnnotationGangScheduleTimeout
	default:
		return
	}
	_, waves := quota.Waves(t.roles)
	conflicts := quota.TimeoutConflicts(timeout, t.deps.opts.PodsReadyTimeouts, waves)
	if len(conflicts) == 0 {
		return
	}
	t.deps.recorder.Eventf(&t.TrainJob, nil, corev1.EventTypeWarning, ReasonGangTimeoutConflict, actionGang,
		"%s: whenever its gang has to wait for room, Kueue evicts the job before the scheduler gives up on the gang, on every attempt, so it can't become ready until room is free the moment it is admitted. Make Kueue's waitForPodsReady timeouts longer than the gang's schedule timeout, or lower %s",
		strings.Join(conflicts, "; "), where)
}

// progress is how far each role got, by name.
func (t *TrainJob) progress(ctx context.Context) map[string]quota.Progress {
	jobs := t.jobsStatus(ctx)
	out := make(map[string]quota.Progress, len(jobs))
	for i := range jobs {
		out[jobs[i].Name] = quota.Progress{Ready: ptr.Deref(jobs[i].Ready, 0), Succeeded: ptr.Deref(jobs[i].Succeeded, 0)}
	}
	return out
}

// trainerPodGroup is the PodGroup Trainer's coscheduling plugin made for
// job, from the cache; nil when there is none or it is not the job's.
func trainerPodGroup(ctx context.Context, c client.Reader, job *trainjob.TrainJob) (*schedv1alpha1.PodGroup, error) {
	pg := &schedv1alpha1.PodGroup{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), pg); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if owner := metav1.GetControllerOfNoCopy(pg); owner == nil || owner.UID != job.UID || pg.Labels[shape.OwnedLabel] == "true" {
		return nil, nil
	}
	return pg, nil
}
