package integration

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// The PodGroups a job gets at its start: the ClusterQueue's setting binds
// it (a value of the ClusterQueue's that can't be read is said and left
// out), a gang the cluster can't keep refuses the start for good, and our
// PodGroups exist before the job is unsuspended.
func TestGangPlansAtTheStart(t *testing.T) {
	for name, tc := range map[string]struct {
		cqAnnotations map[string]string
		podGroupCRD   bool
		wantGroups    int
		wantEvent     string
		wantRefused   bool
	}{
		"no gang asked": {podGroupCRD: true},
		"the ClusterQueue gang schedules": {cqAnnotations: map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling},
			podGroupCRD: true, wantGroups: 1},
		"the ClusterQueue's mode is unknown: said, left out": {cqAnnotations: map[string]string{names.GangSchedulingAnnotation: "volcano"},
			podGroupCRD: true, wantEvent: gang.ReasonInvalidGangScheduling},
		"no PodGroup CRD: refused for good": {cqAnnotations: map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling},
			wantEvent: gang.ReasonGangUnsupported, wantRefused: true},
	} {
		t.Run(name, func(t *testing.T) {
			f := newStartFixture(t, shape.PodTemplateOverrides{}, nil, corev1.PodSpec{})
			f.deps.opts.PodGroups = tc.podGroupCRD
			f.job.obs.clusterQueue = &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: tc.cqAnnotations}}
			plans, err := f.job.gangPlans(t.Context())
			if tc.wantRefused {
				if err == nil || !errors.Is(err, podset.ErrInvalidPodSetUpdate) {
					t.Fatalf("error %v, want a permanent refusal", err)
				}
			} else if err != nil {
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
