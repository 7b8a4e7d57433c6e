package localcluster

import (
	"fmt"
	"sort"
	"strings"
	"testing"
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

// settleFor: the manager is settled once it made at most one request (but
// lease renewals) over this long. quietChecks: how often the audit log,
// which a test's cluster fills to tens of MB, is read while watching.
const (
	settleFor   = 5 * time.Second
	quietChecks = 5 * time.Second
)

// AssertQuiet waits for the manager to settle from what the test set in
// motion (a minute at most), then watches it for window: t fails as soon
// as it made more than bound requests since the window began, with the
// requests most frequent first. A hot loop (a reconcile that fails and
// requeues, a write that never settles) makes hundreds; bound leaves room
// for a few resyncs.
func AssertQuiet(t testing.TB, auditLog string, window time.Duration, bound int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		now := time.Now()
		n, summary, err := IdleRequests(auditLog, now.Add(-settleFor), now)
		if err != nil {
			t.Fatal(err)
		}
		if n <= 1 {
			break
		}
		if now.After(deadline) {
			t.Fatalf("the manager never settled: %d requests in the last %v, most frequent first:\n%s", n, settleFor, summary)
		}
		time.Sleep(time.Second)
	}
	start := time.Now()
	for end := start.Add(window); ; {
		time.Sleep(min(quietChecks, time.Until(end)))
		n, summary, err := IdleRequests(auditLog, start, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if n > bound {
			t.Fatalf("a hot loop: %d requests since %s, more than %d, most frequent first:\n%s", n, start.Format(time.TimeOnly), bound, summary)
		}
		if !time.Now().Before(end) {
			t.Logf("the manager's requests in %v of idle (leases aside): %d\n%s", window, n, summary)
			return
		}
	}
}
