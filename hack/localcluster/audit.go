package localcluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// AuditEvent is the part of an API server audit event the tests count.
type AuditEvent struct {
	Stage    string    `json:"stage"`
	Received time.Time `json:"requestReceivedTimestamp"`
	// Completed: when the answer was sent (the ResponseComplete stage's
	// timestamp).
	Completed  time.Time                 `json:"stageTimestamp"`
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
// log (a local cluster's is next to its kubeconfig) that match keep, in
// the order the API server wrote them. The API server rotates its log
// every 100 MB (a `make bench` at N = 1,000 writes more), keeping each
// full file beside it as <name>-<time><ext>: those come first.
func AuditEvents(path string, keep func(*AuditEvent) bool) ([]AuditEvent, error) {
	files, err := auditFiles(path)
	if err != nil {
		return nil, err
	}
	var out []AuditEvent
	for _, f := range files {
		if out, err = readAudit(f, keep, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// auditFiles are the log's rotated files, oldest first (their names carry
// the time of rotation, so they sort by it), then the log itself.
func auditFiles(path string) ([]string, error) {
	ext := filepath.Ext(path)
	rotated, err := filepath.Glob(strings.TrimSuffix(path, ext) + "-*" + ext)
	if err != nil {
		return nil, fmt.Errorf("listing the rotated audit logs: %w", err)
	}
	slices.Sort(rotated)
	return append(rotated, path), nil
}

func readAudit(path string, keep func(*AuditEvent) bool, out []AuditEvent) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	defer f.Close()
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
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the audit log %s: %w", path, err)
	}
	return out, nil
}
