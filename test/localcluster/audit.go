package localcluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// AuditEvent is the part of an API server audit event the tests count.
type AuditEvent struct {
	Stage      string                    `json:"stage"`
	Received   time.Time                 `json:"requestReceivedTimestamp"`
	Verb       string                    `json:"verb"`
	User       struct{ Username string } `json:"user"`
	RequestURI string                    `json:"requestURI"`
	ObjectRef  *struct {
		Resource, Namespace, Name, Subresource string
	} `json:"objectRef"`
	ResponseStatus *struct{ Code int } `json:"responseStatus"`
	// RequestObject and ResponseObject: the object sent and the object the
	// API server answered with (what it stored, for a successful write),
	// where the audit policy records bodies.
	RequestObject  json.RawMessage `json:"requestObject,omitempty"`
	ResponseObject json.RawMessage `json:"responseObject,omitempty"`
}

// Succeeded: the request completed with a 2xx answer.
func (e *AuditEvent) Succeeded() bool {
	return e.Stage == "ResponseComplete" && e.ResponseStatus != nil && e.ResponseStatus.Code < 300
}

// AuditEvents reads the completed requests about objects from an audit
// log (a local cluster's is next to its kubeconfig) that match keep.
func AuditEvents(path string, keep func(*AuditEvent) bool) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	defer f.Close()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e AuditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Stage != "ResponseComplete" || e.ObjectRef == nil {
			continue
		}
		if keep(&e) {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}
