package names

import (
	"encoding/json"
	"time"
)

// PolicyHold is what HeldByPolicyAnnotation records.
type PolicyHold struct {
	Policy  string    `json:"policy"`
	Since   time.Time `json:"since"`
	Attempt int       `json:"attempt"`
}

// PolicyHoldOf reads the held-by-policy mark among a Workload's
// annotations; ok is false when there is none (or one that can't be read,
// which the next hold overwrites).
func PolicyHoldOf(annotations map[string]string) (h PolicyHold, ok bool) {
	v, ok := annotations[HeldByPolicyAnnotation]
	if !ok || json.Unmarshal([]byte(v), &h) != nil {
		return PolicyHold{}, false
	}
	return h, true
}
