package integration

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// The PodGroups a job gets at its start: the ClusterQueue's setting binds
// it (a value of the ClusterQueue's that can't be read is said and left
// out), a gang whose scheduler the cluster lacks makes the job wait (an
// admin's set-up, never the job's fault), and our
// PodGroups exist before the job is unsuspended.
func TestGangPlansAtTheStart(t *testing.T) {
	for name, tc := range map[string]struct {
		cqAnnotations map[string]string
		podGroupCRD   bool
		wantGroups    int
		wantEvent     string
		// wantWait: an error the job framework retries, not a refusal.
		wantWait bool
	}{
		"no gang asked": {podGroupCRD: true},
		"the ClusterQueue gang schedules": {cqAnnotations: map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling},
			podGroupCRD: true, wantGroups: 1},
		"the ClusterQueue's mode is unknown: said, left out": {cqAnnotations: map[string]string{names.GangSchedulingAnnotation: "volcano"},
			podGroupCRD: true, wantEvent: gang.ReasonInvalidGangScheduling},
		"no PodGroup CRD: the job waits, not finished": {cqAnnotations: map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling},
			wantEvent: gang.ReasonGangUnsupported, wantWait: true},
	} {
		t.Run(name, func(t *testing.T) {
			f := newStartFixture(t, shape.PodTemplateOverrides{}, nil, corev1.PodSpec{})
			f.deps.opts.Gangs.PodGroupCRD = tc.podGroupCRD
			f.job.obs.clusterQueue = &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: tc.cqAnnotations}}
			plans, err := f.job.gangPlans(t.Context())
			switch {
			case tc.wantWait:
				if err == nil || errors.Is(err, podset.ErrInvalidPodSetUpdate) {
					t.Fatalf("error %v, want one retried, not permanent", err)
				}
			case err != nil:
				t.Fatal(err)
			}
			if err == nil {
				if err := f.job.applyPodGroups(t.Context(), plans); err != nil {
					t.Fatal(err)
				}
			}
			var groups schedv1alpha1.PodGroupList
			if err := f.c.List(t.Context(), &groups); err != nil {
				t.Fatal(err)
			}
			if len(groups.Items) != tc.wantGroups || len(plans) != tc.wantGroups {
				t.Errorf("%d PodGroups applied for %d plans, want %d", len(groups.Items), len(plans), tc.wantGroups)
			}
			events := drain(f.events)
			if tc.wantEvent == "" && len(events) > 0 || tc.wantEvent != "" && (len(events) != 1 || !strings.Contains(events[0], tc.wantEvent)) {
				t.Errorf("events %v, want %q", events, tc.wantEvent)
			}
		})
	}
}

// In gang mode workload-api the start applies a Kubernetes PodGroup per
// wave, of this admission; after a reconcile the groups of admissions that
// ended go (another admission's, or every one once the job holds no
// reservation), never the current one's nor another job's.
func TestKubernetesPodGroupsGoWithTheirAdmission(t *testing.T) {
	f := newStartFixture(t, shape.PodTemplateOverrides{}, nil, corev1.PodSpec{})
	f.deps.opts.Gangs.WorkloadAPI = true
	f.job.obs.clusterQueue = &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: map[string]string{names.GangSchedulingAnnotation: gang.WorkloadAPI}}}
	plans, err := f.job.gangPlans(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.job.applyPodGroups(t.Context(), plans); err != nil {
		t.Fatal(err)
	}
	current := admissionToken(f.job.obs.reserved())
	stale := gang.Plan{Name: "j-old", Roles: []string{"node"}, WorkloadAPI: true, Admission: "old"}
	otherJob := f.job.TrainJob.DeepCopy()
	otherJob.Name, otherJob.UID = "other", "other-uid"
	for _, pg := range []client.Object{gang.WorkloadAPIGroup(stale, &f.job.TrainJob, ""), gang.WorkloadAPIGroup(gang.Plan{Name: "other-x", Roles: []string{"node"}, WorkloadAPI: true, Admission: current}, otherJob, "")} {
		if err := f.c.Create(t.Context(), pg); err != nil {
			t.Fatal(err)
		}
	}
	// The other job's group, labelled as this job's (a forgery), stays.
	forged := gang.WorkloadAPIGroup(gang.Plan{Name: "forged", Roles: []string{"node"}, WorkloadAPI: true, Admission: "old"}, otherJob, "")
	forged.SetLabels(map[string]string{names.OwnedLabel: "true", names.PodGroupJobLabel: "j", names.PodGroupAdmissionLabel: "old"})
	if err := f.c.Create(t.Context(), forged); err != nil {
		t.Fatal(err)
	}
	groupNames := func() []string {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gang.WorkloadAPIGroupGVK.GroupVersion().WithKind("PodGroupList"))
		if err := f.c.List(t.Context(), list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, pg := range list.Items {
			out = append(out, pg.GetName())
		}
		slices.Sort(out)
		return out
	}
	want := []string{"forged", "j-" + current, "j-old", "other-x"}
	if diff := cmp.Diff(want, groupNames()); diff != "" {
		t.Fatalf("PodGroups after the start (-want +got):\n%s", diff)
	}
	if err := f.job.releaseWorkloadAPIGroups(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"forged", "j-" + current, "other-x"}, groupNames()); diff != "" {
		t.Errorf("after a reconcile of the admitted job (-want +got):\n%s", diff)
	}
	f.job.obs.workload = nil // evicted: no reservation
	if err := f.job.releaseWorkloadAPIGroups(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"forged", "other-x"}, groupNames()); diff != "" {
		t.Errorf("after its admission ended (-want +got):\n%s", diff)
	}
}
