package queuecondition

import (
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// patchFor is the JSON patch (RFC 6902) of job's status that sets c and
// touches nothing else: our entry replaced where the job has it (guarded
// by a test that the entry at that index is still ours: a list Trainer
// rewrote meanwhile fails the patch, never loses an entry), appended where
// it has a list without it, and the list created where it has none. A transition time is kept when the status is the
// same.
func patchFor(job *trainjob.TrainJob, c metav1.Condition, now metav1.Time) client.Patch {
	conds := job.Status.Conditions
	c.LastTransitionTime = now
	for i := range conds {
		if conds[i].Type != names.AdmittedCondition {
			continue
		}
		if conds[i].Status == c.Status {
			c.LastTransitionTime = conds[i].LastTransitionTime
		}
		at := "/status/conditions/" + strconv.Itoa(i)
		return jsonPatch(op{"test", at + "/type", names.AdmittedCondition}, op{"replace", at, c})
	}
	if conds != nil {
		return jsonPatch(op{"add", "/status/conditions/-", c})
	}
	// No list yet (perhaps no status: a JSON patch path into it would not
	// resolve): a merge patch of the list alone, guarded by the
	// resourceVersion read, so a list Trainer created meanwhile is never
	// replaced.
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": job.ResourceVersion},
		"status":   map[string]any{"conditions": []metav1.Condition{c}},
	})
	if err != nil {
		panic(fmt.Sprintf("marshalling a merge patch of conditions: %v", err))
	}
	return client.RawPatch(types.MergePatchType, data)
}

func jsonPatch(ops ...op) client.Patch {
	data, err := json.Marshal(ops)
	if err != nil {
		panic(fmt.Sprintf("marshalling a JSON patch of conditions: %v", err)) // a Condition always marshals
	}
	return client.RawPatch(types.JSONPatchType, data)
}
