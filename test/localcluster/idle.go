package localcluster

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// ManagerUser is trainjob-kueue's identity on a local cluster.
const ManagerUser = "system:serviceaccount:trainjob-kueue-system:trainjob-kueue-controller-manager"

// IdleRequests are the requests the manager made between start and end,
// leader lease renewals aside (every couple of seconds, by design), from
// the audit log at path; summary counts them per verb, resource and
// object, the most frequent first, for a test's log.
func IdleRequests(path string, start, end time.Time) (n int, summary string, err error) {
	events, err := AuditEvents(path, func(e *AuditEvent) bool {
		return e.User.Username == ManagerUser && !e.Received.Before(start) && e.Received.Before(end) &&
			(e.ObjectRef == nil || e.ObjectRef.Resource != "leases")
	})
	if err != nil {
		return 0, "", err
	}
	byKind := map[string]int{}
	for _, e := range events {
		key := e.Verb + " " + e.RequestURI
		if r := e.ObjectRef; r != nil {
			key = fmt.Sprintf("%s %s", e.Verb, r.Resource)
			if r.Subresource != "" {
				key += "/" + r.Subresource
			}
			if r.Namespace != "" {
				key += " " + r.Namespace + "/" + r.Name
			}
		}
		byKind[key]++
	}
	lines := make([]string, 0, len(byKind))
	for k, c := range byKind {
		lines = append(lines, fmt.Sprintf("%4d %s", c, k))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(lines)))
	return len(events), strings.Join(lines, "\n"), nil
}
