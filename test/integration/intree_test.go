package integration_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	kueuetrainjob "sigs.k8s.io/kueue/pkg/controller/jobs/trainjob"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	testpoll "github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// inTreeRun records what Kueue's in-tree TrainJob integration left behind
// before trainjob-kueue took over: an admin switching integrations with jobs
// queued and running.
type inTreeRun struct {
	err       error
	namespace string
	queue     string
	running   *trainer.TrainJob
	queued    *trainer.TrainJob
	workloads map[string]types.UID // job name -> Workload UID
	// userLists are each job's user patches as stored at creation.
	userLists map[string][]trainer.RuntimePatch
}

var inTree inTreeRun

const inTreeNamespace = "switch-from-intree"

// runInTreePhase runs Kueue's in-tree TrainJob integration alone: one job is
// admitted and started by it, one waits for quota. Then it stops.
func runInTreePhase(parent context.Context, cfg *rest.Config) (err error) {
	ctx, stop := context.WithCancel(parent)
	defer func() {
		stop()
		inTree.err = err
	}()
	mgr, err := newManager(cfg, testScheme(), 0, "")
	if err != nil {
		return err
	}
	if err := kueuetrainjob.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	rec, err := kueuetrainjob.NewReconciler(ctx, mgr.GetClient(), mgr.GetFieldIndexer(), mgr.GetEventRecorder("intree"),
		jobframework.WithManagedJobsNamespaceSelector(everything()))
	if err != nil {
		return err
	}
	if err := rec.SetupWithManager(mgr); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		stop()
		<-done
	}()

	inTree.namespace = inTreeNamespace
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: inTreeNamespace}}); err != nil {
		return err
	}
	inTree.queue, err = queueE(inTreeNamespace, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 8})
	if err != nil {
		return err
	}
	if err := k8s.Create(ctx, trainingRuntime(inTreeNamespace, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(8)})); err != nil {
		return err
	}
	inTree.workloads = map[string]types.UID{}
	inTree.userLists = map[string][]trainer.RuntimePatch{}
	for _, name := range []string{"running", "queued"} {
		tj := trainJob(inTreeNamespace, name, "rt", inTree.queue)
		// What the in-tree webhook would do: suspend, and add Kueue's empty
		// runtime patch, last, for its reconciler to fill at admission.
		tj.Spec.Suspend = ptr.To(true)
		tj.Spec.RuntimePatches = []trainer.RuntimePatch{
			userPatch("example.com/disk", "node", "disk", "ssd"),
			userPatch("example.com/zone", "node", "zone", "z1"),
			{Manager: names.InTreeRuntimePatchManager, TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{Template: &trainer.JobSetTemplatePatch{Spec: &trainer.JobSetSpecPatch{}}}},
		}
		if err := retryCreate(ctx, tj); err != nil {
			return err
		}
		// As stored, stamped by Trainer's webhook.
		if users := userPatches(tj.Spec.RuntimePatches); len(users) != 2 || users[0].Time == nil {
			return fmt.Errorf("%s stored with user patches %+v", name, users)
		}
		inTree.userLists[name] = userPatches(tj.Spec.RuntimePatches)
		if name == "running" {
			inTree.running = tj
			// The in-tree integration admits and starts it.
			if err := poll(func() error {
				got := &trainer.TrainJob{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
					return err
				}
				if ptr.Deref(got.Spec.Suspend, true) {
					return fmt.Errorf("in-tree has not started %s", name)
				}
				return nil
			}); err != nil {
				return err
			}
		} else {
			inTree.queued = tj
		}
		if err := poll(func() error {
			wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
			if err != nil {
				return err
			}
			inTree.workloads[name] = wl.UID
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func poll(f func() error) error { return testpoll.Until(timeout, f) }

func retryCreate(ctx context.Context, o client.Object) error {
	return poll(func() error {
		err := k8s.Create(ctx, o)
		if err != nil {
			fmt.Fprintf(os.Stderr, "retrying create of %s: %v\n", o.GetName(), err)
		}
		return err
	})
}

// After the switch, trainjob-kueue carries on with the in-tree
// integration's jobs: nothing is recreated, the running job keeps running,
// and when it is preempted exactly the in-tree entries are removed.
func TestJobsOfTheInTreeIntegrationAreAdopted(t *testing.T) {
	if inTree.err != nil {
		t.Fatalf("the in-tree phase failed: %v", inTree.err)
	}
	running, queued := inTree.running, inTree.queued
	consistently(t, "running job left running on its Workload", 2*time.Second, func() error {
		got := getTrainJob(t, running)
		if ptr.Deref(got.Spec.Suspend, false) {
			return fmt.Errorf("the adopted running job was suspended")
		}
		for name, uid := range inTree.workloads {
			tj := map[string]*trainer.TrainJob{"running": running, "queued": queued}[name]
			if wl := fixtures.WaitWorkload(t, ctx, k8s, tj); wl.UID != uid {
				return fmt.Errorf("Workload of %s recreated", name)
			}
		}
		return nil
	})
	// The in-tree integration wrote its admission into its patch.
	inTreePatches := patchesBy(getTrainJob(t, running).Spec.RuntimePatches, names.InTreeRuntimePatchManager)
	if len(inTreePatches) != 1 || podTemplatePatches(inTreePatches[0])["node"] == nil {
		t.Fatalf("want the in-tree patch of the running job with its admission before any preemption, got %+v", inTreePatches)
	}

	// An admin deactivates the running job: its quota goes to the queued one.
	eventually(t, "deactivate", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, running)
		wl.Spec.Active = ptr.To(false)
		return k8s.Update(ctx, wl)
	})
	eventually(t, "in-tree patch emptied, user patches kept in order", func() error {
		got := getTrainJob(t, running)
		if !ptr.Deref(got.Spec.Suspend, false) {
			return fmt.Errorf("not suspended")
		}
		if diff := cmp.Diff(inTree.userLists["running"], userPatches(got.Spec.RuntimePatches)); diff != "" {
			return fmt.Errorf("user runtime patches (-user +now):\n%s", diff)
		}
		// Kept empty: Kueue's built-in integration needs it to start the
		// job again after a switch back.
		if p := patchesBy(got.Spec.RuntimePatches, names.InTreeRuntimePatchManager); len(p) != 1 || len(podTemplatePatches(p[0])) != 0 {
			return fmt.Errorf("want the in-tree patch kept empty, got %+v", p)
		}
		if n := len(got.Spec.RuntimePatches); n != len(inTree.userLists["running"])+1 {
			return fmt.Errorf("%d runtime patches, want the user's and the empty in-tree one", n)
		}
		return nil
	})
	started := waitRunning(t, queued)
	if n := len(patchesBy(started.Spec.RuntimePatches, names.RuntimePatchManager)); n != 1 {
		t.Errorf("want our one patch on the queued job once started, got %d: %+v", n, started.Spec.RuntimePatches)
	}
	for _, p := range patchesBy(started.Spec.RuntimePatches, names.InTreeRuntimePatchManager) {
		if len(podTemplatePatches(p)) != 0 {
			t.Errorf("the in-tree integration's admission survived on the job we started: %+v", p)
		}
	}
	if diff := cmp.Diff(inTree.userLists["queued"], userPatches(started.Spec.RuntimePatches)); diff != "" {
		t.Errorf("user patches of the queued job (-user +now):\n%s", diff)
	}
	if last := started.Spec.RuntimePatches[len(started.Spec.RuntimePatches)-1]; last.Manager != names.RuntimePatchManager {
		t.Errorf("our patch is not the last one, applied after the user's: %+v", started.Spec.RuntimePatches)
	}
	if wl := fixtures.WaitWorkload(t, ctx, k8s, queued); wl.UID != inTree.workloads["queued"] {
		t.Errorf("the queued job's Workload was recreated: it lost its place in the queue")
	}
}
