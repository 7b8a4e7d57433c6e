package integration

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Stop mirrors the start: suspend, then, once no Job is active, remove the
// entries; a job still draining keeps them until its Jobs stop.
func TestStopMirrorsTheStart(t *testing.T) {
	for name, tc := range map[string]struct {
		active      int32
		wantEntries bool
	}{
		"drained: entries removed":                {},
		"Jobs still active: entries kept for now": {active: 1, wantEntries: true},
	} {
		t.Run(name, func(t *testing.T) {
			s := shape.PodTemplateOverrides{}
			f := newStartFixture(t, s, nil, corev1.PodSpec{})
			if err := f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos); err != nil {
				t.Fatal(err)
			}
			running := &TrainJob{TrainJob: *f.stored(t), deps: f.deps, obs: &observed{jobs: []trainer.JobStatus{{Name: "node", Active: ptr.To(tc.active)}}}}
			stopped, err := running.Stop(t.Context(), f.c, nil, "", "")
			if err != nil || !stopped {
				t.Fatalf("Stop = %v, %v", stopped, err)
			}
			stored := f.stored(t)
			if !ptr.Deref(stored.Spec.Suspend, false) {
				t.Error("not suspended")
			}
			if got := s.Injected(stored); got != tc.wantEntries {
				t.Errorf("entries: %v, want %v", got, tc.wantEntries)
			}
			if !tc.wantEntries && len(stored.Spec.PodTemplateOverrides) != 0 {
				t.Errorf("left %v behind", stored.Spec.PodTemplateOverrides)
			}
		})
	}
}

// A job MultiKueue dispatched was never started here: Stop writes nothing.
// A stop the API server refuses for what it contains is said, once however
// often it is retried, and returned as an error for the backoff.
func TestStopOfADispatchedJobOrARefusedOne(t *testing.T) {
	refuseSuspend := func(patch []byte) error {
		if strings.Contains(string(patch), `"suspend":true`) {
			return apierrors.NewInvalid(schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "TrainJob"}, "j",
				field.ErrorList{field.Forbidden(field.NewPath("spec", "suspend"), "a policy says no")})
		}
		return nil
	}
	for name, tc := range map[string]struct {
		runner     trainjob.Runner
		refuse     func([]byte) error
		wantWrites int
		wantErr    bool
		wantEvents []string
	}{
		"dispatched: nothing to undo": {runner: trainjob.RunRemotely},
		"refused twice: said once": {runner: trainjob.RunLocally, refuse: refuseSuspend, wantWrites: 2, wantErr: true,
			wantEvents: []string{"Warning " + ReasonStopRefused}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newStartFixture(t, shape.PodTemplateOverrides{}, tc.refuse, corev1.PodSpec{})
			running := f.stored(t)
			running.Spec.Suspend = ptr.To(false)
			for range 2 {
				job := &TrainJob{TrainJob: *running.DeepCopy(), deps: f.deps, obs: &observed{runner: tc.runner}}
				stopped, err := job.Stop(t.Context(), f.c, nil, "", "")
				if (err != nil) != tc.wantErr || stopped {
					t.Fatalf("Stop = %v, %v; want an error: %v", stopped, err, tc.wantErr)
				}
			}
			if len(*f.writes) != tc.wantWrites {
				t.Errorf("%d writes, want %d: %v", len(*f.writes), tc.wantWrites, *f.writes)
			}
			var got []string
			for _, e := range drain(f.events) {
				got = append(got, strings.Join(strings.Fields(e)[:2], " "))
			}
			if diff := cmp.Diff(tc.wantEvents, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
