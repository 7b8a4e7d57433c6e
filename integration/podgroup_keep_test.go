package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// A group of the running admission deleted (by a user who may edit
// PodGroups) is made again under its name, so the job's later pods can
// join their gang; one still there, or of a job that is not running, is
// left as it is.
func TestARunningAdmissionsDeletedGroupIsMadeAgain(t *testing.T) {
	f := newStartFixture(t, shape.PodTemplateOverrides{}, nil, corev1.PodSpec{})
	f.deps.opts.Gangs.WorkloadAPI = true
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: map[string]string{names.GangSchedulingAnnotation: gang.WorkloadAPI}}}
	f.job.obs.clusterQueue = cq
	if err := f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos); err != nil {
		t.Fatal(err)
	}
	drain(f.events)
	// The fake client lists a kind outside its scheme as metadata only
	// once it has listed it unstructured (as TestKubernetesPodGroupsGoWithTheirAdmission does).
	all := &unstructured.UnstructuredList{}
	all.SetGroupVersionKind(gang.WorkloadAPIGroupGVK.GroupVersion().WithKind("PodGroupList"))
	if err := f.c.List(t.Context(), all); err != nil || len(all.Items) != 1 {
		t.Fatalf("the start's PodGroups: %v (%d)", err, len(all.Items))
	}
	group := &unstructured.Unstructured{}
	group.SetGroupVersionKind(gang.WorkloadAPIGroupGVK)
	key := client.ObjectKey{Namespace: f.job.Namespace, Name: "j-" + admissionToken(f.job.obs.reserved())}
	running := func() *TrainJob {
		stored := &TrainJob{deps: f.deps, obs: f.job.obs}
		stored.obs.clusterQueue = nil // observe reads it only for a job about to start
		if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(&f.job.TrainJob), &stored.TrainJob); err != nil {
			t.Fatal(err)
		}
		return stored
	}
	if err := running().releaseWorkloadAPIGroups(t.Context()); err != nil {
		t.Fatal(err)
	}
	if events := drain(f.events); len(events) != 0 {
		t.Errorf("the group is there, and something was said: %v", events)
	}
	// A cache that has not seen the group yet: found there, not made
	// again, nothing said.
	if err := running().keepWorkloadAPIGroups(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if events := drain(f.events); len(events) != 0 {
		t.Errorf("a group the cache had not seen was said made again: %v", events)
	}
	if err := f.c.Get(t.Context(), key, group); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Delete(t.Context(), group); err != nil {
		t.Fatal(err)
	}
	create(t, f.c, cq)
	if err := running().releaseWorkloadAPIGroups(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Get(t.Context(), key, group); err != nil {
		t.Fatalf("the running admission's group was not made again: %v", err)
	}
	if events := drain(f.events); len(events) != 1 || !strings.Contains(events[0], gang.ReasonPodGroupRemade) {
		t.Errorf("events %v, want one %s", events, gang.ReasonPodGroupRemade)
	}
}
