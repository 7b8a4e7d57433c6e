package gang

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Every name WorkloadAPIGroupName gives a job's groups is reserved for the
// job, long names cut to 63 included; names of other jobs, and of groups
// our start never makes, are not.
func TestWorkloadAPINameOfKnowsEveryNameOfAJobsGroups(t *testing.T) {
	long := "a-training-job-whose-name-is-long-enough-to-be-cut-for-a-label"
	for _, tc := range []struct {
		job, name string
		want      bool
	}{
		{"victim", WorkloadAPIGroupName("victim", "node", true, "184174"), true},
		{"victim", WorkloadAPIGroupName("victim", "dataset-initializer", false, "b14142"), true},
		{long, WorkloadAPIGroupName(long, "node", true, "184174"), true},
		{long, WorkloadAPIGroupName(long, "model-initializer", false, "184174"), true},
		{"victim", WorkloadAPIGroupName("victim2", "node", true, "184174"), false},
		{"victim", "victim", false},
		{"victim", "victim-team-gang", false},
		{"victim", "other-184174", false},
		{"a", WorkloadAPIGroupName(long, "node", true, "184174"), true},
		{"x", WorkloadAPIGroupName(long, "node", true, "184174"), false},
	} {
		if got := WorkloadAPINameOf(tc.job, tc.name); got != tc.want {
			t.Errorf("WorkloadAPINameOf(%q, %q) = %v, want %v", tc.job, tc.name, got, tc.want)
		}
	}
}

// What stands under a group's name is used only when it is the job's and
// as the plan has it (the API server's defaults aside); the job's in
// another form is stale (never used);
// anything whose controller is not the job, by UID, is another's,
// whatever its labels and spec.
func TestClaimOfTellsOursStaleAndSquatted(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "victim2", UID: "job-uid"}}
	p := Plan{Name: "victim2-b14142", Roles: []string{"node"}, WorkloadAPI: true, Admission: "b14142"}
	p.Gang.MinMember = 2
	want := WorkloadAPIGroup(p, job, "high")
	edited := func(edit func(*unstructured.Unstructured)) *unstructured.Unstructured {
		pg := want.DeepCopy()
		edit(pg)
		return pg
	}
	for name, tc := range map[string]struct {
		existing *unstructured.Unstructured
		want     Claim
	}{
		"as we make it": {want, ClaimOurs},
		"with what the API server sets": {edited(func(pg *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(pg.Object, int64(1000), "spec", "priority")
			_ = unstructured.SetNestedField(pg.Object, "PreemptLowerPriority", "spec", "preemptionPolicy")
			_ = unstructured.SetNestedField(pg.Object, map[string]any{"single": map[string]any{}}, "spec", "disruptionMode")
		}), ClaimOurs},
		"a disruption mode of another's": {edited(func(pg *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(pg.Object, map[string]any{"all": map[string]any{}}, "spec", "disruptionMode")
		}), ClaimStale},
		"another priority class (the pods' changed)": {edited(func(pg *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(pg.Object, "low", "spec", "priorityClassName")
		}), ClaimStale},
		"another minCount": {edited(func(pg *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(pg.Object, int64(1), "spec", "schedulingPolicy", "gang", "minCount")
		}), ClaimStale},
		"a topology constraint added": {edited(func(pg *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(pg.Object, map[string]any{"topology": []any{}}, "spec", "schedulingConstraints")
		}), ClaimStale},
		"a ConfigMap its controller": {edited(func(pg *unstructured.Unstructured) {
			pg.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "squat", UID: "cm", Controller: ptr.To(true)}})
		}), ClaimSquatted},
		"no controller, our labels and spec": {edited(func(pg *unstructured.Unstructured) { pg.SetOwnerReferences(nil) }), ClaimSquatted},
		"the job's name, another UID": {edited(func(pg *unstructured.Unstructured) {
			refs := pg.GetOwnerReferences()
			refs[0].UID = "older-job"
			pg.SetOwnerReferences(refs)
		}), ClaimSquatted},
	} {
		t.Run(name, func(t *testing.T) {
			got, why := ClaimOf(tc.existing, want)
			if got != tc.want {
				t.Errorf("ClaimOf = %v (%s), want %v", got, why, tc.want)
			}
			if got != ClaimOurs && why == "" {
				t.Error("no reason given")
			}
		})
	}
}
