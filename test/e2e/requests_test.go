package e2e_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// writesBy counts the successful requests user made on one TrainJob, by
// verb, and the dry runs among them.
func writesBy(t *testing.T, user, ns, name string) (map[string]int, int) {
	t.Helper()
	events, err := localcluster.AuditEvents(auditLog, func(e *localcluster.AuditEvent) bool {
		return e.Succeeded() && e.User.Username == user && e.ObjectRef.Resource == "trainjobs" &&
			e.ObjectRef.Namespace == ns && e.ObjectRef.Name == name
	})
	if err != nil {
		t.Fatalf("this test reads the local cluster's audit log: %v", err)
	}
	verbs, dryRuns := map[string]int{}, 0
	for _, e := range events {
		verb := e.Verb
		if e.ObjectRef.Subresource != "" {
			verb += "/" + e.ObjectRef.Subresource
		}
		verbs[verb]++
		if strings.Contains(e.RequestURI, "dryRun") {
			dryRuns++
		}
	}
	return verbs, dryRuns
}

const ourUser = "system:serviceaccount:trainjob-kueue-system:trainjob-kueue-controller-manager"

// Admission costs one TrainJob request on Trainer releases that take the
// injection and the unsuspend together (v2.2.1+), two before; never a full
// Update, never a dry run — counted by the API server, not by us. Our
// condition is written only when it would say something the job does not
// carry: how many times depends on the machine (a job that waited past
// the settle time is told it is queued first) and on Trainer (v2.2+'s
// merge patch of the conditions may drop it, to be written again), so
// each write is judged by what it changed, not counted.
func TestAdmissionWritesAsFewRequestsAsTheReleaseAllows(t *testing.T) {
	ns := namespace(t)
	pool := gpuPool(ns, "gpu", 8)
	nodesOf(t, ns, pool, 1, 8)
	lq := queue(t, ns, ns, pool)
	create(t, fixtures.TrainingRuntime(ns, "torch", fixtures.TorchPolicy(1),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(8), Tolerations: []corev1.Toleration{runtimeToleration}, Annotations: fixtures.RunFor(2 * time.Second)}))
	tj := fixtures.TrainJob(ns, "count", "torch", lq)
	create(t, tj)
	waitComplete(t, tj, 3*time.Minute)

	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: "trainjobs.trainer.kubeflow.org"}, crd); err != nil {
		t.Fatal(err)
	}
	s, err := discovery.DetectShape(crd)
	if err != nil {
		t.Fatal(err)
	}
	want := 2
	if s.Name() == "spec.runtimePatches" {
		want = 1
		// v2.2.0 shares v2.2.1's CRD but refuses the single request: we
		// fall back to two and remember.
		settings, err := localcluster.SettingsOf(filepath.Dir(auditLog))
		if err != nil {
			t.Fatalf("reading the local cluster's settings: %v", err)
		}
		if settings.TrainerVersion == "v2.2.0" {
			want = 2
		}
	}
	eventually(t, 10*time.Second, "audit log", func() error {
		verbs, dryRuns := writesBy(t, ourUser, ns, tj.Name)
		if verbs["update"] != 0 || dryRuns != 0 {
			return fmt.Errorf("full updates %d, dry runs %d: want none (%v)", verbs["update"], dryRuns, verbs)
		}
		if verbs["patch"] != want {
			return fmt.Errorf("%s: %d TrainJob patches to start the job, want %d (%v)", s.Name(), verbs["patch"], want, verbs)
		}
		return conditionWritesNeeded(t, ns, tj.Name)
	})
}

// conditionWritesNeeded: our status patches of one TrainJob, each judged
// by the job as the API server held it just before. At least one; none
// right after another of ours with no one's write between (a rewrite has
// a cause: Trainer's write that dropped it, or the job's next state);
// where the audit log holds bodies (the suite's own cluster), none that
// left our condition saying what it said before.
func conditionWritesNeeded(t *testing.T, ns, name string) error {
	t.Helper()
	events, err := localcluster.AuditEvents(auditLog, func(e *localcluster.AuditEvent) bool {
		return e.Succeeded() && e.ObjectRef.Resource == "trainjobs" && e.ObjectRef.Namespace == ns &&
			e.ObjectRef.Name == name && slices.Contains([]string{"create", "update", "patch"}, e.Verb)
	})
	if err != nil {
		t.Fatalf("this test reads the local cluster's audit log: %v", err)
	}
	ours := func(e localcluster.AuditEvent) bool {
		return e.User.Username == ourUser && e.ObjectRef.Subresource == "status"
	}
	told, between := 0, true
	for _, e := range events {
		if !ours(e) {
			between = true
			continue
		}
		if told++; !between {
			return fmt.Errorf("status patch %d of ours came right after another with no write between: written twice for one cause", told)
		}
		between = false
	}
	if told == 0 {
		return fmt.Errorf("no status patch of ours: the admitted job was never told (%s)", writers(events))
	}
	if len(events[0].ResponseObject) == 0 {
		return nil // a cluster started without TrainJob bodies: the order is all there is
	}
	slices.SortStableFunc(events, func(a, b localcluster.AuditEvent) int {
		return cmp.Compare(resourceVersion(t, a), resourceVersion(t, b))
	})
	for i, e := range events {
		if !ours(e) {
			continue
		}
		if before, after := storedCondition(t, stateBefore(t, events, i)), storedCondition(t, e); before == after {
			return fmt.Errorf("a status patch of ours left our condition as it was (%q): a write with no change (%s)", after, writers(events))
		}
	}
	return nil
}

// stateBefore is the write, among events in resourceVersion order, that
// left the job as it was before events[i] was applied: the last one of a
// lower resourceVersion. A write that changes nothing (Trainer's status
// patch often) answers with the resourceVersion it found, so it shares
// that of the write before it, and the audit log may list the two either
// way round: the state before a write is never one of its own version.
// The zero event (no condition) when none is older.
func stateBefore(t *testing.T, events []localcluster.AuditEvent, i int) localcluster.AuditEvent {
	t.Helper()
	rv := resourceVersion(t, events[i])
	for j := i - 1; j >= 0; j-- {
		if resourceVersion(t, events[j]) < rv {
			return events[j]
		}
	}
	return localcluster.AuditEvent{ResponseObject: []byte("{}")}
}

// writers: who wrote the job, in order, for a failure's message.
func writers(events []localcluster.AuditEvent) string {
	var out []string
	for _, e := range events {
		out = append(out, fmt.Sprintf("%s %s/%s", e.User.Username, e.Verb, e.ObjectRef.Subresource))
	}
	return strings.Join(out, ", ")
}

// storedCondition is our condition in the TrainJob a write left, as
// index|status|reason|message ("" without it): first in the list is part
// of what it says (kubectl's STATE column reads the last).
func storedCondition(t *testing.T, e localcluster.AuditEvent) string {
	t.Helper()
	job := struct {
		Status struct{ Conditions []metav1.Condition } `json:"status"`
	}{}
	if err := json.Unmarshal(e.ResponseObject, &job); err != nil {
		t.Fatalf("audit log: a TrainJob body: %v", err)
	}
	for i, c := range job.Status.Conditions {
		if c.Type == names.AdmittedCondition {
			return fmt.Sprintf("%d|%s|%s|%s", i, c.Status, c.Reason, c.Message)
		}
	}
	return ""
}

// resourceVersion of the TrainJob a write left: the order the API server
// stored them in.
func resourceVersion(t *testing.T, e localcluster.AuditEvent) int64 {
	t.Helper()
	obj := struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}{}
	if err := json.Unmarshal(e.ResponseObject, &obj); err != nil {
		t.Fatalf("audit log: a TrainJob body: %v", err)
	}
	rv, err := strconv.ParseInt(obj.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatalf("audit log: resourceVersion %q: %v", obj.Metadata.ResourceVersion, err)
	}
	return rv
}
