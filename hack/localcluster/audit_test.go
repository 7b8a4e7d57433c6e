package localcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A log the API server rotated is read whole: the rotated files first,
// oldest first, then the one it writes now.
func TestAuditEventsReadsTheRotatedFilesToo(t *testing.T) {
	dir := t.TempDir()
	event := func(name string) string {
		return `{"stage":"ResponseComplete","verb":"create","objectRef":{"resource":"workloads","name":"` + name + `"},"responseStatus":{"code":201}}`
	}
	files := map[string][]string{
		"audit-2026-11-25T19-30-00.000.log": {event("first"), `{"stage":"ResponseStarted"}`},
		"audit-2026-11-25T19-31-00.000.log": {event("second")},
		"audit.log":                         {event("third")},
		"other-2026-11-25T19-29-00.000.log": {event("not ours")},
	}
	for name, lines := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := AuditEvents(filepath.Join(dir, "audit.log"), func(*AuditEvent) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.ObjectRef.Name)
	}
	if diff := cmp.Diff([]string{"first", "second", "third"}, names); diff != "" {
		t.Errorf("events read (-want +got):\n%s", diff)
	}
}
