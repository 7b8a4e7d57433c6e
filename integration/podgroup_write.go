package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// A PodGroup write is ours, never the job's. The groups are objects we
// make beside the job, under names anyone can compute, in a namespace
// where others may create PodGroups and where an admin's webhook or policy
// may judge them: none of that is what the job's owner wrote. So a group
// that can't be written never finishes the job's Workload. The start
// waits for it, the job suspended, its quota kept — a re-queue would put
// it behind jobs it was ahead of for a cause outside it; Kueue's
// waitForPodsReady (on by default from v0.19) bounds the wait and gives
// the quota back at its timeout — and the write is retried with the
// controller's back-off, a Warning event naming the group, what stopped
// it and the fix.

// podGroupError: a group of the job's gang could not be written.
type podGroupError struct {
	// group is the PodGroup's namespace/name; roles its wave's.
	group string
	roles []string
	// cause says what stopped the write; fix what would let it through.
	cause, fix string
	err        error
}

func (e *podGroupError) Error() string {
	return fmt.Sprintf("PodGroup %s for roles %s could not be written: %s. The job is not started and keeps its quota reservation; the write is retried with back-off. %s",
		e.group, strings.Join(e.roles, ","), e.cause, e.fix)
}

func (e *podGroupError) Unwrap() error { return e.err }

// podGroupNotWritten is the podGroupError of a write of plan p's group in
// namespace that the API server answered with err.
func podGroupNotWritten(namespace string, p gang.Plan, err error) error {
	e := &podGroupError{group: namespace + "/" + p.Name, roles: p.Roles, err: err}
	o, ok := originOf(err)
	switch {
	case ok && (o.Webhook != "" || o.Policy != ""):
		e.cause = fmt.Sprintf("%s refused it: %s", o.refuser(), o.said())
		e.fix = fmt.Sprintf("Let PodGroups of field manager %s (label %s=true) through, or mend the rule; the job starts once the write goes through", names.FieldManager, names.OwnedLabel)
	case ok && apierrors.IsInvalid(err):
		e.cause = fmt.Sprintf("the API server refused it: %s", o.said())
		e.fix = "A PodGroup already under that name, or a change to its immutable fields, is refused so: see the group's owner"
	case apierrors.IsForbidden(err):
		e.cause = err.Error()
		e.fix = "Grant trainjob-kueue's ServiceAccount the PodGroup permissions of its role (config/rbac)"
	default:
		e.cause = err.Error()
	}
	return e
}

// createWorkloadAPIGroup makes plan p's PodGroup (mode workload-api)
// through gang's writer, or finds it made (an earlier try of the start).
// What stands under the name and is not the job's as planned is never used
// nor touched, and its fields never reach the job's pods: the start waits,
// and says who should do what. made: this call created it.
func (t *TrainJob) createWorkloadAPIGroup(ctx context.Context, p gang.Plan) (made bool, err error) {
	made, err = t.deps.workloadAPIGroups().Create(ctx, gang.WorkloadAPIGroup(p, &t.TrainJob, t.podPriorityClass(p.Roles)))
	var claimErr *gang.ClaimError
	if !errors.As(err, &claimErr) {
		if err != nil {
			return false, podGroupNotWritten(t.Namespace, p, err)
		}
		return made, nil
	}
	e := &podGroupError{group: t.Namespace + "/" + p.Name, roles: p.Roles, err: err}
	switch claimErr.Claim {
	case gang.ClaimStale:
		e.cause = "a PodGroup of this job's is under its name, and " + claimErr.Why
		e.fix = fmt.Sprintf("If the job has not started, delete it (kubectl delete podgroups.scheduling.k8s.io -n %s %s) and the start makes it again; Kueue's waitForPodsReady, where on, queues the job again at its timeout, with groups of a new name", t.Namespace, p.Name)
	default:
		e.cause = "another PodGroup already has its name, and " + claimErr.Why
		e.fix = fmt.Sprintf("Its owner should delete it (kubectl delete podgroups.scheduling.k8s.io -n %s %s); the job starts once it is gone", t.Namespace, p.Name)
	}
	return false, e
}
