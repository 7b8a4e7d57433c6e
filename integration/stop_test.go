package integration

import (
	"errors"
	"net/http"
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

// A stop rendered from a cache one write behind: it still shows the job
// suspended with its entries, while the server has it started by our own
// start a moment before (seen on the demo: a job preempted as it
// started). The restore must not strip a running job's entries, which
// Trainer refuses ("can only be modified when the TrainJob is suspended")
// and no one could fix: the stop suspends the job again instead, and the
// entries go once it drains.
func TestStopOfAJobStartedBehindTheCache(t *testing.T) {
	var f *startFixture
	trainerRule := func(patch []byte) error {
		if !strings.Contains(string(patch), "podTemplateOverrides") || strings.Contains(string(patch), "suspend") {
			return nil
		}
		cur := f.stored(t)
		if !strings.Contains(string(patch), `"value":"`+cur.ResourceVersion+`"`) {
			// The API server fails the patch's test first, with a bare 422.
			return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", "testing value /metadata/resourceVersion failed: test failed", 0, false)
		}
		if !ptr.Deref(cur.Spec.Suspend, false) {
			return apierrors.NewForbidden(schema.GroupResource{Group: "trainer.kubeflow.org", Resource: "trainjobs"}, "j",
				errors.New(`admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.podTemplateOverrides: Forbidden: PodTemplateOverrides can only be modified when the TrainJob is suspended`))
		}
		return nil
	}
	f = newStartFixture(t, shape.PodTemplateOverrides{}, trainerRule, corev1.PodSpec{})
	if err := f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos); err != nil {
		t.Fatal(err)
	}
	drain(f.events) // the start's
	behind := f.stored(t)
	behind.Spec.Suspend = ptr.To(true)
	behind.ResourceVersion = "1"
	job := &TrainJob{TrainJob: *behind, deps: f.deps, obs: &observed{}}
	stopped, err := job.Stop(t.Context(), f.c, nil, "", "")
	if err != nil || !stopped {
		t.Fatalf("Stop = %v, %v; want the job stopped now, without an error", stopped, err)
	}
	stored := f.stored(t)
	if !ptr.Deref(stored.Spec.Suspend, false) {
		t.Error("the job runs on: not suspended")
	}
	if !(shape.PodTemplateOverrides{}).Injected(stored) {
		t.Error("entries removed before the job drained")
	}
	if got := drain(f.events); len(got) != 0 {
		t.Errorf("events %v, want none: a race is no one's to fix", got)
	}
}
