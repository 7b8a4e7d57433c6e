package integration_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// podGroupSize reads a PodGroup's minMember and GPUs.
func podGroupSize(ns, name string) (int32, int64, error) {
	pg := &schedv1alpha1.PodGroup{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pg); err != nil {
		return 0, 0, err
	}
	q := pg.Spec.MinResources[gpu]
	return pg.Spec.MinMember, q.Value(), nil
}

func wantPodGroup(t *testing.T, ns, name string, members int32, gpus int64) {
	t.Helper()
	eventually(t, fmt.Sprintf("PodGroup %s of %d pods", name, members), func() error {
		m, g, err := podGroupSize(ns, name)
		if err != nil {
			return err
		}
		if m != members || g != gpus {
			return fmt.Errorf("minMember %d, %d GPUs; want %d, %d", m, g, members, gpus)
		}
		return nil
	})
}

// initThenTrain: a dataset initializer, then two 4-GPU trainer nodes.
func initThenTrain(ns, name string) *trainer.TrainingRuntime {
	return trainingRuntime(ns, name, torchPolicy(2),
		role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: cpus("1")},
		role{Name: "node", Ancestor: "trainer", Requests: gpus(4), DependsOn: []string{"dataset-initializer"}})
}

func TestTrainerPodGroupFollowsTheWaveBeingPlaced(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	rt := initThenTrain(ns, "gang")
	rt.Spec.PodGroupPolicy = &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{Coscheduling: &trainer.CoschedulingPodGroupPolicySource{}}}
	create(t, rt)
	tj := trainJob(ns, "job", "gang", lq)
	create(t, tj)

	waitRunning(t, tj)
	jobSetOf(t, tj)
	// Started: Trainer sized its group for all three pods; the initializer
	// alone is placed first.
	wantPodGroup(t, ns, "job", 1, 0)
	eventually(t, "GangResized event", func() error {
		return hasEvent(t, tj, gang.ReasonGangResized, "minMember 3 → 1 for dataset-initializer")
	})
	// The initializer runs: the trainer nodes' size before JobSet creates
	// them, counting the running initializer.
	setJobsStatus(t, ns, "job", "dataset-initializer", 1, 0)
	wantPodGroup(t, ns, "job", 3, 8)
	// It finished: the trainer nodes alone.
	setJobsStatus(t, ns, "job", "dataset-initializer", 0, 1)
	wantPodGroup(t, ns, "job", 2, 8)
}

func TestTrainerPodGroupOfAJobWithoutWavesIsLeftAlone(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	rt := trainingRuntime(ns, "gang", torchPolicy(2), role{Name: "node", Ancestor: "trainer", Requests: gpus(4)})
	rt.Spec.PodGroupPolicy = &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{Coscheduling: &trainer.CoschedulingPodGroupPolicySource{}}}
	create(t, rt)
	tj := trainJob(ns, "job", "gang", lq)
	create(t, tj)
	wantPodGroup(t, ns, "job", 2, 8)
	waitRunning(t, tj)
	jobSetOf(t, tj)
	pg := &schedv1alpha1.PodGroup{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job"}, pg); err != nil {
		t.Fatal(err)
	}
	spec := pg.Spec.DeepCopy()
	// Pods never run here, so the gang is retried (an annotation); its
	// size is Trainer's and stays so.
	consistently(t, "Trainer's PodGroup size untouched", timeout/10, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pg), pg); err != nil {
			return err
		}
		if !equality.Semantic.DeepEqual(spec, &pg.Spec) {
			return fmt.Errorf("PodGroup spec written: %+v, was %+v", pg.Spec, *spec)
		}
		return nil
	})
	if err := hasEvent(t, tj, gang.ReasonGangResized, ""); err == nil {
		t.Errorf("a GangResized event for a group that was right")
	}
}

// annotateClusterQueue sets annotations on the ClusterQueue of the test's
// namespace, as a batch admin would.
func annotateClusterQueue(t *testing.T, ns string, annotations map[string]string) {
	t.Helper()
	eventually(t, "annotate the ClusterQueue", func() error {
		cq := &kueue.ClusterQueue{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
			return err
		}
		if cq.Annotations == nil {
			cq.Annotations = map[string]string{}
		}
		for k, v := range annotations {
			cq.Annotations[k] = v
		}
		return k8s.Update(ctx, cq)
	})
}

func TestGangOptInGivesEachWaveItsPodGroupAndPreemptionRemovesTheLabels(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	// The batch admin opts the whole ClusterQueue in.
	annotateClusterQueue(t, ns, map[string]string{names.GangSchedulingAnnotation: gang.Coscheduling})
	create(t, initThenTrain(ns, "plain"))
	tj := trainJob(ns, "job", "plain", lq)
	// A user's "none" does not opt out of the admin's ClusterQueue.
	tj.Annotations = map[string]string{names.GangScheduleTimeoutAnnotation: "120", names.GangSchedulingAnnotation: gang.None}
	create(t, tj)
	waitRunning(t, tj)

	wantPodGroup(t, ns, "job.dataset-initializer", 1, 0)
	wantPodGroup(t, ns, "job", 2, 8)
	pg := &schedv1alpha1.PodGroup{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job"}, pg); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(pg.Spec.ScheduleTimeoutSeconds, 0); got != 120 {
		t.Errorf("scheduleTimeoutSeconds %d, want 120 from the job's annotation", got)
	}
	js := jobSetOf(t, tj)
	for role, group := range map[string]string{"dataset-initializer": "job.dataset-initializer", "node": "job"} {
		if got := replicatedJob(js, role).Template.Spec.Template.Labels[gang.PodGroupLabel]; got != group {
			t.Errorf("pods of %s are in PodGroup %q, want %q", role, got, group)
		}
	}

	eventually(t, "Injected event names the PodGroups", func() error {
		return hasEvent(t, tj, integration.ReasonInjected, "gang scheduled as PodGroups job.dataset-initializer (dataset-initializer, 1 pods), job (node, 2 pods)")
	})
	// No pod is ever placed here: the first wave's gang waits and is
	// retried, the trainer nodes' is not due yet.
	eventually(t, "the waiting gang retried", func() error {
		pg := &schedv1alpha1.PodGroup{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job.dataset-initializer"}, pg); err != nil {
			return err
		}
		if pg.Annotations[names.GangRetriedAtAnnotation] == "" {
			return fmt.Errorf("not retried")
		}
		return nil
	})
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job"}, pg); err != nil {
		t.Fatal(err)
	}
	if at := pg.Annotations[names.GangRetriedAtAnnotation]; at != "" {
		t.Errorf("the trainer nodes' gang, not due before the initializer finished, was retried at %s", at)
	}

	// Preempted (an admin deactivates it): suspended, and the labels go
	// with the rest of the admission.
	eventually(t, "deactivate", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, tj)
		wl.Spec.Active = ptr.To(false)
		return k8s.Update(ctx, wl)
	})
	eventually(t, "labels removed", func() error {
		got := getTrainJob(t, tj)
		if !ptr.Deref(got.Spec.Suspend, false) {
			return fmt.Errorf("not suspended")
		}
		for _, p := range got.Spec.RuntimePatches {
			for job, tmpl := range podTemplatePatches(p) {
				if tmpl.Metadata == nil {
					continue
				}
				if _, ok := tmpl.Metadata.Labels[gang.PodGroupLabel]; ok {
					return fmt.Errorf("runtime patch of %s still labels the pods of %s with a PodGroup", p.Manager, job)
				}
			}
		}
		return nil
	})
}

func TestGangAnnotationsAreValidated(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	create(t, initThenTrain(ns, "plain"))
	for name, annotations := range map[string]map[string]string{
		"mode":    {names.GangSchedulingAnnotation: "volcano"},
		"timeout": {names.GangScheduleTimeoutAnnotation: "1m"},
	} {
		tj := trainJob(ns, name, "plain", lq)
		tj.Annotations = annotations
		err := k8s.Create(ctx, tj)
		for key := range annotations {
			if err == nil || !strings.Contains(err.Error(), key) {
				t.Errorf("%s: want a refusal naming %s, got %v", name, key, err)
			}
		}
	}
}

func TestBadGangTimeoutOnAClusterQueueIsAWarningNotARefusal(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", GPUs: 8})
	annotateClusterQueue(t, ns, map[string]string{
		names.GangSchedulingAnnotation:      gang.Coscheduling,
		names.GangScheduleTimeoutAnnotation: "soon",
	})
	create(t, initThenTrain(ns, "plain"))
	tj := trainJob(ns, "job", "plain", lq)
	create(t, tj)
	waitRunning(t, tj)
	eventually(t, "InvalidGangScheduling event", func() error {
		return hasEvent(t, tj, gang.ReasonInvalidGangScheduling, names.GangScheduleTimeoutAnnotation)
	})
	wantPodGroup(t, ns, "job", 2, 8)
	pg := &schedv1alpha1.PodGroup{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job"}, pg); err != nil {
		t.Fatal(err)
	}
	if pg.Spec.ScheduleTimeoutSeconds != nil {
		t.Errorf("scheduleTimeoutSeconds %d from a timeout that is no number", *pg.Spec.ScheduleTimeoutSeconds)
	}
}
