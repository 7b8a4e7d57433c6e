package reliability_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// ourUser is trainjob-kueue's identity on the local cluster.
const ourUser = "system:serviceaccount:trainjob-kueue-system:trainjob-kueue-controller-manager"

// version is one state of a TrainJob the API server held: the object it
// answered a successful write with, as its audit log recorded it.
type version struct {
	rv   int64
	by   string
	verb string
	obj  *unstructured.Unstructured
}

func (v version) String() string {
	return fmt.Sprintf("rv %d (%s by %s)", v.rv, v.verb, v.by)
}

// history is every version of every TrainJob of namespace ns the API
// server held, by job UID, in the order it stored them.
func history(t *testing.T, ns string) map[string][]version {
	t.Helper()
	events, err := localcluster.AuditEvents(cluster.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return e.Succeeded() && e.ObjectRef.Resource == "trainjobs" && e.ObjectRef.Namespace == ns &&
			slices.Contains([]string{"create", "update", "patch"}, e.Verb)
	})
	if err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
	out := map[string][]version{}
	for _, e := range events {
		if len(e.ResponseObject) == 0 {
			t.Fatalf("the audit log holds no body of %s %s/%s: this cluster was not started with AuditTrainJobBodies", e.Verb, ns, e.ObjectRef.Name)
		}
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal(e.ResponseObject, &obj.Object); err != nil {
			t.Fatalf("audit log: TrainJob %s: %v", e.ObjectRef.Name, err)
		}
		rv, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
		if err != nil {
			t.Fatalf("audit log: TrainJob %s resourceVersion %q: %v", e.ObjectRef.Name, obj.GetResourceVersion(), err)
		}
		uid := string(obj.GetUID())
		out[uid] = append(out[uid], version{rv: rv, by: e.User.Username, verb: e.Verb, obj: obj})
	}
	for uid := range out {
		vs := out[uid]
		slices.SortFunc(vs, func(a, b version) int { return int(a.rv - b.rv) })
		// A write that changed nothing answers with the version it left.
		out[uid] = slices.CompactFunc(vs, func(a, b version) bool { return a.rv == b.rv })
	}
	return out
}

// entries splits a version's override entries into the user's and
// trainjob-kueue's.
func entries(obj *unstructured.Unstructured) (user, ours []map[string]any) {
	list, _, _ := unstructured.NestedSlice(obj.Object, "spec", overrideField())
	for _, e := range list {
		m, _ := e.(map[string]any)
		if owned(m) {
			ours = append(ours, m)
		} else {
			user = append(user, m)
		}
	}
	return user, ours
}

func owned(entry map[string]any) bool {
	if overrides == "spec.runtimePatches" {
		return entry["manager"] == names.RuntimePatchManager
	}
	v, _, _ := unstructured.NestedString(entry, "metadata", "labels", names.OwnedLabel)
	return v == "true"
}

// targets: the roles an injected entry places.
func targets(entry map[string]any) []string {
	var out []string
	if overrides == "spec.runtimePatches" {
		rjs, _, _ := unstructured.NestedSlice(entry, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
		for _, rj := range rjs {
			m, _ := rj.(map[string]any)
			out = append(out, fmt.Sprint(m["name"]))
		}
		return out
	}
	tjs, _, _ := unstructured.NestedSlice(entry, "targetJobs")
	for _, tj := range tjs {
		m, _ := tj.(map[string]any)
		out = append(out, fmt.Sprint(m["name"]))
	}
	return out
}

// judged is what judge checks of one job, for the test's log.
type judged struct {
	name     string
	versions int
	started  int
}

// judge checks issue 16's guarantees on every version of every TrainJob of
// ns the API server held, and on what they left: the user's entries exactly
// as submitted, at most one set of injected entries, never unsuspended
// without them, one Workload per job (created once), every pod on its
// flavor's nodes, every job complete. roles are the job's replicatedJobs;
// flavors maps a flavor name to the node labels it stands for.
func judge(t *testing.T, ns string, roles []string, flavors map[string]map[string]string) []judged {
	t.Helper()
	var out []judged
	hist := history(t, ns)
	var jobs unstructured.UnstructuredList
	jobs.SetAPIVersion("trainer.kubeflow.org/v1alpha1")
	jobs.SetKind("TrainJobList")
	eventually(t, time.Minute, "list TrainJobs", func() error { return k8s.List(ctx, &jobs, client.InNamespace(ns)) })
	if len(jobs.Items) == 0 {
		t.Fatalf("no TrainJobs in %s to judge", ns)
	}
	creates := workloadCreates(t, ns)
	for _, job := range jobs.Items {
		name, uid := job.GetName(), string(job.GetUID())
		vs := hist[uid]
		if len(vs) == 0 || vs[0].verb != "create" {
			t.Errorf("%s: the audit log holds no create of the job (%d versions)", name, len(vs))
			continue
		}
		j := judged{name: name, versions: len(vs)}
		submitted, _ := entries(vs[0].obj)
		for _, v := range vs {
			user, ours := entries(v.obj)
			if d := cmp.Diff(submitted, user); d != "" {
				t.Errorf("%s %s: the user's entries are not as submitted (-submitted +held):\n%s", name, v, d)
			}
			placed := map[string]int{}
			for _, e := range ours {
				for _, r := range targets(e) {
					placed[r]++
				}
			}
			if overrides == "spec.runtimePatches" && len(ours) > 1 {
				t.Errorf("%s %s: %d injected runtime patches, want at most one", name, v, len(ours))
			}
			for r, n := range placed {
				if n > 1 {
					t.Errorf("%s %s: role %s has %d injected entries, want at most one set", name, v, r, n)
				}
			}
			if suspend, found, _ := unstructured.NestedBool(v.obj.Object, "spec", "suspend"); !found || !suspend {
				j.started++
				for _, r := range roles {
					if placed[r] != 1 {
						t.Errorf("%s %s: unsuspended without the admission's entry for role %s", name, v, r)
					}
				}
			}
		}
		if n := creates[name]; n != 1 {
			t.Errorf("%s: its Workload was created %d times, want once", name, n)
		}
		if wls := workloadsOf(t, ns, uid); len(wls) != 1 {
			t.Errorf("%s: %d Workloads, want one", name, len(wls))
		} else {
			judgePods(t, &job, &wls[0], flavors)
		}
		cur := getJob(t, ns, name)
		if !complete(cur) {
			t.Errorf("%s: not complete: %v", name, cur.Status.Conditions)
		}
		out = append(out, j)
	}
	return out
}

// workloadCreates counts the successful Workload creates of each job of
// ns, by the job's name (Workload names are trainjob-<job>-<hash>).
func workloadCreates(t *testing.T, ns string) map[string]int {
	t.Helper()
	events, err := localcluster.AuditEvents(cluster.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return e.Succeeded() && e.Verb == "create" && e.ObjectRef.Resource == "workloads" && e.ObjectRef.Namespace == ns && e.ObjectRef.Subresource == ""
	})
	if err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
	out := map[string]int{}
	for _, e := range events {
		name := strings.TrimPrefix(e.ObjectRef.Name, "trainjob-")
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i]
		}
		out[name]++
	}
	return out
}

// judgePods: every pod of the job ran on a node of the flavor its role was
// admitted to.
func judgePods(t *testing.T, job *unstructured.Unstructured, wl *kueue.Workload, flavors map[string]map[string]string) {
	t.Helper()
	if wl.Status.Admission == nil {
		t.Errorf("%s: its Workload holds no admission: %v", job.GetName(), wl.Status.Conditions)
		return
	}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		flavor := string(psa.Flavors[corev1.ResourceCPU])
		want, ok := flavors[flavor]
		if !ok {
			t.Errorf("%s/%s: admitted to flavor %s, which the test does not know", job.GetName(), psa.Name, flavor)
			continue
		}
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(job.GetNamespace()), client.MatchingLabels{
			jobsetapi.JobSetNameKey: job.GetName(), jobsetapi.ReplicatedJobNameKey: string(psa.Name)}); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == 0 {
			t.Errorf("%s/%s: no pods", job.GetName(), psa.Name)
		}
		for _, pod := range pods.Items {
			node := &corev1.Node{}
			if err := k8s.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
				t.Errorf("%s: pod %s on no node (%q): %v", job.GetName(), pod.Name, pod.Spec.NodeName, err)
				continue
			}
			for k, v := range want {
				if node.Labels[k] != v {
					t.Errorf("%s/%s: pod %s ran on %s, outside flavor %s (%s=%s)", job.GetName(), psa.Name, pod.Name, node.Name, flavor, k, v)
				}
			}
		}
	}
}
