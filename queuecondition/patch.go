package queuecondition

import (
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// conditionOps are the JSON patch (RFC 6902) operations of job's status
// that set c and touch nothing else, for a job that has a list of
// conditions (jobpatch.GuardedStatus tests the resourceVersion they were
// rendered from first: a list Trainer rewrote meanwhile fails the write,
// never loses an entry): our entry first in the list, in place of where the
// job has it. First, not last: kubectl prints a TrainJob's STATE from the
// type of the list's last entry (Trainer's CRD, .status.conditions[-1:]),
// which must stay Trainer's own ("Suspended" for a queued job), never read
// as "…/Admitted" of a job that is not. A transition time is kept when
// the status is the same. nil for a job without a list
// (firstConditionPatch), or when the entry is already as c says, first.
func conditionOps(job *trainjob.TrainJob, c metav1.Condition, now metav1.Time) []shape.Op {
	conds := job.Status.Conditions
	if conds == nil {
		return nil
	}
	c.LastTransitionTime = now
	for i := range conds {
		if conds[i].Type != names.AdmittedCondition {
			continue
		}
		same := conds[i].Status == c.Status && conds[i].Reason == c.Reason && conds[i].Message == c.Message
		if same && i == 0 {
			return nil
		}
		if conds[i].Status == c.Status {
			c.LastTransitionTime = conds[i].LastTransitionTime
		}
		if i == 0 {
			return []shape.Op{{Op: "replace", Path: "/status/conditions/0", Value: c}}
		}
		return []shape.Op{{Op: "remove", Path: "/status/conditions/" + strconv.Itoa(i)}, {Op: "add", Path: "/status/conditions/0", Value: c}}
	}
	return []shape.Op{{Op: "add", Path: "/status/conditions/0", Value: c}}
}

// firstConditionPatch is the patch of a job with no list of conditions
// yet (perhaps no status: a JSON patch path into it would not resolve): a
// merge patch of the list alone, guarded by the resourceVersion read, so a
// list Trainer created meanwhile is never replaced (a conflict, retried).
func firstConditionPatch(job *trainjob.TrainJob, c metav1.Condition, now metav1.Time) client.Patch {
	c.LastTransitionTime = now
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": job.ResourceVersion},
		"status":   map[string]any{"conditions": []metav1.Condition{c}},
	})
	if err != nil {
		panic(fmt.Sprintf("marshalling a merge patch of conditions: %v", err)) // a Condition always marshals
	}
	return client.RawPatch(types.MergePatchType, data)
}
