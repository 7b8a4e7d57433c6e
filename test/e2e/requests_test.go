package e2e_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
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
// Update, never a dry run — counted by the API server, not by us. A job
// admitted at once is told so in one status write (its queued state never
// lasted long enough to be written); Trainer v2.2+'s merge patch of the
// conditions may drop it once, which is written again.
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
		told := verbs["patch/status"]
		if told < 1 || told > 1 && s.Name() != "spec.runtimePatches" || told > 2 {
			return fmt.Errorf("%s: %d status patches (our condition), want 1 (2 at most where Trainer merge-patches the conditions) (%v)", s.Name(), told, verbs)
		}
		return nil
	})
}
