package integration

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// The anti-cascade rule holds by order: a Workload Kueue evicted has our
// priority boost zeroed before its job is stopped, so the job framework,
// which requeues it only after Stop (in the same reconcile), never
// requeues it boosted, however late the priority boost controller is. A
// write that fails stops nothing (the requeue waits for the next try);
// a Workload without a boost of ours costs no write.
func TestAnEvictedWorkloadIsUnboostedBeforeItsJobStops(t *testing.T) {
	boosted := func(wl *kueue.Workload, evicted bool) {
		wl.Namespace, wl.Name = "ns", "wl"
		preemptcost.SetOn(wl, &preemptcost.Boost{Total: 950})
		if evicted {
			wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue, Reason: kueue.WorkloadEvictedByPreemption})
		}
	}
	for name, tc := range map[string]struct {
		evicted, refused bool
		wantBoost        int32
		wantSuspended    bool
	}{
		"evicted: zeroed, then stopped":                            {evicted: true, wantSuspended: true},
		"evicted, the write refused: nothing stopped":              {evicted: true, refused: true, wantBoost: 950},
		"stopped for another reason: left to the boost controller": {wantBoost: 950, wantSuspended: true},
	} {
		t.Run(name, func(t *testing.T) {
			var refuse func([]byte) error
			if tc.refused {
				refuse = func(patch []byte) error {
					if strings.Contains(string(patch), names.KueuePriorityBoostAnnotation) {
						return apierrors.NewConflict(schema.GroupResource{Resource: "workloads"}, "wl", errors.New("changed"))
					}
					return nil
				}
			}
			f := newStartFixture(t, shape.PodTemplateOverrides{}, refuse, corev1.PodSpec{})
			if err := f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos); err != nil {
				t.Fatal(err)
			}
			wl := f.job.obs.workload
			boosted(wl, tc.evicted)
			if err := f.c.Create(t.Context(), wl); err != nil {
				t.Fatal(err)
			}
			running := &TrainJob{TrainJob: *f.stored(t), deps: f.deps, obs: &observed{workload: wl}}
			_, err := running.Stop(t.Context(), f.c, nil, "", "")
			if (err != nil) != tc.refused {
				t.Fatalf("Stop: %v, want an error: %v", err, tc.refused)
			}
			stored := &kueue.Workload{}
			if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(wl), stored); err != nil {
				t.Fatal(err)
			}
			if got := preemptcost.BoostValue(stored); got != tc.wantBoost {
				t.Errorf("boost %d, want %d", got, tc.wantBoost)
			}
			if got := ptr.Deref(f.stored(t).Spec.Suspend, false); got != tc.wantSuspended {
				t.Errorf("suspended %v, want %v", got, tc.wantSuspended)
			}
		})
	}
}
