package integration

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

// dispatch is what a job's Workload says of MultiKueue's dispatching.
type dispatch struct {
	// check: the Workload has a MultiKueue admission check.
	check bool
	// lostChecks name the Workload's admission checks whose AdmissionCheck
	// no longer exists: which controller they were is unknown, so a job for
	// MultiKueue is taken to stay where it was dispatched.
	lostChecks []string
}

// runsRemotely: the job's Workload is admitted and dispatched, so a worker
// cluster runs the job. That is what "unsuspended" means for a dispatched
// job: the job framework then leaves it alone instead of starting it here.
// The check's state does not matter: admitted means it was Ready, and when
// MultiKueue sends it back to Retry (a lost worker) the job runs remotely
// until Kueue evicts the Workload. A check whose AdmissionCheck was deleted
// keeps the job where it is: finishing its Workload would have MultiKueue
// delete the worker's copy, and the training running there with it.
func (o *observed) runsRemotely() bool {
	wl := o.workload
	if wl == nil || !workload.IsAdmitted(wl) || workloadFinished(wl) {
		return false
	}
	return o.dispatch.check || len(o.dispatch.lostChecks) > 0
}

// dispatchOf reads the Workload's admission checks from the cache.
func (d *deps) dispatchOf(ctx context.Context, wl *kueue.Workload) (dispatch, error) {
	var out dispatch
	if wl == nil {
		return out, nil
	}
	for i := range wl.Status.AdmissionChecks {
		name := wl.Status.AdmissionChecks[i].Name
		ac := &kueue.AdmissionCheck{}
		if err := d.client.Get(ctx, client.ObjectKey{Name: string(name)}, ac); err != nil {
			if client.IgnoreNotFound(err) == nil {
				out.lostChecks = append(out.lostChecks, string(name))
				continue
			}
			return dispatch{}, fmt.Errorf("reading AdmissionCheck %s: %w", name, err)
		}
		if ac.Spec.ControllerName == kueue.MultiKueueControllerName {
			out.check = true
		}
	}
	return out, nil
}

// refuseLocalRun answers the job framework's start of a dispatched job. It
// only gets here when the framework saw the Workload admitted and we did
// not see it admitted through a MultiKueue check: either the Workload
// changed between the framework's read and ours (it was evicted meanwhile),
// or the ClusterQueue admitted it with no MultiKueue check at all. Starting
// it here would break the promise of spec.managedBy. The first is retried:
// an error, not a nil that would make the framework record a start and
// send a patch. The second is permanent: the framework finishes the
// Workload, so its quota goes back, with our event saying why.
func (t *TrainJob) refuseLocalRun() error {
	wl := t.obs.workload
	if wl != nil && (t.obs.dispatch.check || len(t.obs.dispatch.lostChecks) > 0) {
		return fmt.Errorf("the Workload of TrainJob %s/%s changed while it was read; retrying", t.Namespace, t.Name)
	}
	cq := "(unknown)"
	if wl != nil && wl.Status.Admission != nil {
		cq = string(wl.Status.Admission.ClusterQueue)
	}
	msg := fmt.Sprintf("spec.managedBy is %s, but ClusterQueue %s admitted the job without a MultiKueue admission check: no worker cluster will run it, and this cluster must not. The job is not started; recreate it on a queue whose ClusterQueue has a MultiKueue admission check, or without spec.managedBy to run it here", kueue.MultiKueueControllerName, cq)
	t.deps.speak(&t.TrainJob, warning(ReasonNoMultiKueueCheck, actionStart, msg).once(workloadUID(wl)))
	return permanentRefusal(ReasonNoMultiKueueCheck, msg)
}
