package gang

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func workloadAPIPlan() Plan {
	return Plan{Name: "llm-abc123", Roles: []string{"node"}, Gang: quota.Gang{MinMember: 4}, WorkloadAPI: true, Admission: "abc123"}
}

func job() *trainjob.TrainJob {
	return &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "llm", UID: "tj-uid"}}
}

// A Kubernetes PodGroup is the wave's gang, exactly the pods booked, with
// the pods' PriorityClass and no priority of its own (the API server's
// priority admission refuses one), controlled by the job, and marked with
// the job, the admission and the roles the pod webhook and the release
// read.
func TestWorkloadAPIGroupIsTheWavesGang(t *testing.T) {
	pg := WorkloadAPIGroup(workloadAPIPlan(), job(), "high")
	want := map[string]any{
		"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
		"metadata": map[string]any{
			"name": "llm-abc123", "namespace": "team",
			"labels":      map[string]any{names.OwnedLabel: "true", names.PodGroupJobLabel: "llm", names.PodGroupAdmissionLabel: "abc123"},
			"annotations": map[string]any{names.PodGroupRolesAnnotation: "node"},
			"ownerReferences": []any{map[string]any{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
				"name": "llm", "uid": "tj-uid", "controller": true, "blockOwnerDeletion": true}},
		},
		"spec": map[string]any{"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": int64(4)}}, "priorityClassName": "high"},
	}
	if diff := cmp.Diff(want, pg.Object); diff != "" {
		t.Errorf("PodGroup (-want +got):\n%s", diff)
	}
	if _, ok := WorkloadAPIGroup(workloadAPIPlan(), job(), "").Object["spec"].(map[string]any)["priorityClassName"]; ok {
		t.Error("a priorityClassName without a PriorityClass on the pods")
	}
}

// A pod joins a group only if it is ours, its job's by UID, not being
// deleted, and for the pod's role.
func TestWorkloadAPIGroupFor(t *testing.T) {
	for name, tc := range map[string]struct {
		edit    func(*metav1.ObjectMeta)
		role    string
		refused string
	}{
		"ours, its job's, its role": {role: "node"},
		"another job's":             {role: "node", edit: func(m *metav1.ObjectMeta) { m.OwnerReferences[0].UID = "other" }, refused: "not one trainjob-kueue made"},
		"not ours":                  {role: "node", edit: func(m *metav1.ObjectMeta) { delete(m.Labels, names.OwnedLabel) }, refused: "not one trainjob-kueue made"},
		"no controller":             {role: "node", edit: func(m *metav1.ObjectMeta) { m.OwnerReferences = nil }, refused: "not one trainjob-kueue made"},
		"being deleted": {role: "node", edit: func(m *metav1.ObjectMeta) { m.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} },
			refused: "being deleted"},
		"another role": {role: "dataset-initializer", refused: `not for this pod's role "dataset-initializer"`},
	} {
		t.Run(name, func(t *testing.T) {
			pg := WorkloadAPIGroup(workloadAPIPlan(), job(), "")
			m := &metav1.ObjectMeta{Name: pg.GetName(), Labels: pg.GetLabels(), Annotations: pg.GetAnnotations(), OwnerReferences: pg.GetOwnerReferences()}
			if tc.edit != nil {
				tc.edit(m)
			}
			err := WorkloadAPIGroupFor(m, "tj-uid", tc.role)
			if tc.refused == "" && err != nil {
				t.Fatal(err)
			}
			if tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)) {
				t.Fatalf("WorkloadAPIGroupFor = %v, want %q", err, tc.refused)
			}
		})
	}
}

// A group ends with its admission: deleted when the job holds no
// reservation (evicted, preempted, finished) or holds another one; never
// the current admission's, nor another job's.
func TestEnded(t *testing.T) {
	pg := WorkloadAPIGroup(workloadAPIPlan(), job(), "")
	for name, tc := range map[string]struct {
		uid, current string
		deleting     bool
		want         bool
	}{
		"the current admission's": {uid: "tj-uid", current: "abc123"},
		"no reservation":          {uid: "tj-uid", want: true},
		"an earlier admission's":  {uid: "tj-uid", current: "def456", want: true},
		"another job's":           {uid: "other", current: ""},
		"being deleted already":   {uid: "tj-uid", deleting: true},
	} {
		t.Run(name, func(t *testing.T) {
			g := pg.DeepCopy()
			if tc.deleting {
				g.SetDeletionTimestamp(&metav1.Time{Time: time.Unix(1, 0)})
			}
			if got := Ended(g, "tj-uid", tc.current); tc.uid == "tj-uid" && got != tc.want {
				t.Errorf("Ended = %v, want %v", got, tc.want)
			}
			if tc.uid != "tj-uid" && Ended(g, "other", tc.current) {
				t.Error("another job's group ended with this one's admission")
			}
		})
	}
}

// Names are label values (the pods carry them) and differ between
// admissions; a long job name keeps them within 63 characters, apart.
func TestWorkloadAPIGroupName(t *testing.T) {
	if got := WorkloadAPIGroupName("llm", "dataset-initializer", false, "abc123"); got != "llm.dataset-initializer-abc123" {
		t.Errorf("earlier wave: %q", got)
	}
	if got := WorkloadAPIGroupName("llm", "node", true, "abc123"); got != "llm-abc123" {
		t.Errorf("last wave: %q", got)
	}
	long := strings.Repeat("j", 60)
	a, b := WorkloadAPIGroupName(long, "node", true, "abc123"), WorkloadAPIGroupName(long, "node", true, "def456")
	if a == b || len(a) > validation.LabelValueMaxLength || len(validation.IsValidLabelValue(a)) > 0 {
		t.Errorf("long names %q and %q: want two distinct label values", a, b)
	}
	if AdmissionToken("wl", metav1.Time{Time: time.Unix(10, 0)}) == AdmissionToken("wl", metav1.Time{Time: time.Unix(20, 0)}) {
		t.Error("two admissions of a Workload have one token")
	}
}

// The ClusterQueue webhook and the start refuse a mode the cluster does
// not serve, naming the annotation and what is missing.
func TestSchedulersAvailable(t *testing.T) {
	for name, tc := range map[string]struct {
		s       Schedulers
		mode    string
		refused string
	}{
		"workload-api served":     {s: Schedulers{WorkloadAPI: true}, mode: WorkloadAPI},
		"workload-api not served": {s: Schedulers{PodGroupCRD: true}, mode: WorkloadAPI, refused: "trainjob-kueue.dev/gang-scheduling: workload-api) needs Kubernetes' Workload API"},
		"coscheduling, no CRD":    {s: Schedulers{WorkloadAPI: true}, mode: Coscheduling, refused: "podgroups.scheduling.x-k8s.io"},
		"none":                    {mode: None},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.s.Available(tc.mode)
			if tc.refused == "" && err != nil {
				t.Fatal(err)
			}
			if tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)) {
				t.Fatalf("Available = %v, want %q", err, tc.refused)
			}
		})
	}
}
