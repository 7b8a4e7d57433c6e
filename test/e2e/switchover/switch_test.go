package switchover_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/migrate"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// Under Kueue's built-in integration: a finished job, two running ones
// filling the quota (one past its initializer, its pods reclaimable), and
// two queued behind them. The cluster switches to trainjob-kueue while a
// job is created every two seconds. The running jobs keep their pods,
// JobSets and Workloads; the queued ones keep their Workloads and are
// admitted in the order they had; every job completes once; no
// ClusterQueue is ever over its quota and no job has two Workloads; every
// job created during the switch was queued, none started unqueued. Then
// the same jobs under trainjob-kueue, and the switch back: Kueue's
// integration takes them over as they are, and starts the queued ones
// trainjob-kueue's webhook marked for it. In a namespace with a LocalQueue
// named default, an unlabelled job is queued once before, during and
// after each switch.
func TestASwitchFromTheBuiltInIntegrationAndBackRestartsNoJob(t *testing.T) {
	t.Run("to ours", func(t *testing.T) { switchWithJobsInFlight(t, localcluster.IntegrationOurs) })
	if t.Failed() {
		return
	}
	t.Run("back to intree", func(t *testing.T) {
		switchWithJobsInFlight(t, localcluster.IntegrationInTree)
		// Every job it started has finished: nothing of ours is left to
		// hand back, so the switch again stops trainjob-kueue.
		if err := cluster.Switch(ctx, root, localcluster.IntegrationInTree, os.Stderr); err != nil {
			t.Fatal(err)
		}
		if cluster.Running("trainjob-kueue") {
			t.Error("trainjob-kueue still runs after the way back, with no job of its own left")
		}
	})
}

func switchWithJobsInFlight(t *testing.T, to string) {
	ns, lq := fixtures.NamespaceWithQueue(t, ctx, k8s, "switch", 2, 4)
	fixtures.Create(t, ctx, k8s,
		fixtures.TrainingRuntime(ns, "init", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "dataset-initializer", Ancestor: "dataset-initializer", Requests: fixtures.CPUs("1"), Annotations: fixtures.RunFor(time.Second)},
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), DependsOn: []string{"dataset-initializer"}, Annotations: fixtures.RunFor(runFor)}),
		fixtures.TrainingRuntime(ns, "long", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(runFor)}),
		fixtures.TrainingRuntime(ns, "short", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(4), Annotations: fixtures.RunFor(3 * time.Second)}))

	// Before the running jobs start, so they still outlast the switch.
	dq := fixtures.NamespaceWithDefaultQueue(t, ctx, k8s, "switch-default")
	fixtures.RunQueuedOnce(t, ctx, k8s, dq, "before")

	finished := fixtures.TrainJob(ns, "finished", "short", lq)
	fixtures.Create(t, ctx, k8s, finished)
	fixtures.WaitComplete(t, ctx, k8s, finished, 3*time.Minute)
	withInit, long := fixtures.TrainJob(ns, "with-init", "init", lq), fixtures.TrainJob(ns, "long", "long", lq)
	fixtures.Create(t, ctx, k8s, withInit, long)
	running(t, withInit)
	running(t, long)
	first, second := fixtures.TrainJob(ns, "first", "short", lq), fixtures.TrainJob(ns, "second", "short", lq)
	fixtures.Create(t, ctx, k8s, first)
	time.Sleep(time.Second) // Kueue orders equal priorities by creation
	fixtures.Create(t, ctx, k8s, second)
	all := []*trainer.TrainJob{finished, withInit, long, first, second}
	// Kueue's integration creates a job's Workload after the job; the
	// snapshot needs both queued jobs' (a busy CI machine once took longer
	// than the create-to-snapshot gap).
	hasWorkload(t, first)
	hasWorkload(t, second)
	before := snapshot(t, all)
	for _, tj := range []*trainer.TrainJob{first, second} {
		if before[tj.Name].admitted {
			t.Fatalf("%s was admitted before the switch: the quota is not full", tj.Name)
		}
	}

	var verdicts map[string]migrate.Decision
	if to == localcluster.IntegrationOurs {
		verdicts = checkBeforeTheSwitch(t, ns)
	} else if !strings.HasPrefix(cluster.Settings().KueueVersion, "v0.16.") {
		// migrate --check --to intree judges with Kueue v0.19's in-tree
		// code, which the way back on Kueue v0.16 does not run.
		checkTheWayBack(t, ns)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var created, unlabelled []string
	var watchErr, defaultErr error
	var probes fixtures.ProbeResults
	wg.Add(5)
	go func() { defer wg.Done(); probes = fixtures.ProbeCreates(ctx, k8s, ns, "short", lq, stop) }()
	go func() { defer wg.Done(); created = createThroughout(t, ns, stop) }()
	go func() { defer wg.Done(); unlabelled = createUnlabelledThroughout(t, dq, stop) }()
	go func() { defer wg.Done(); watchErr = watchInvariants(ns, all, stop) }()
	go func() { defer wg.Done(); defaultErr = watchQueuedOnce(dq, stop) }()
	err := cluster.Switch(ctx, root, to, os.Stderr)
	time.Sleep(5 * time.Second) // jobs created after the switch, too
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("switching to %s: %v", to, err)
	}
	if watchErr != nil {
		t.Error(watchErr)
	}
	t.Logf("dry-run creates through the switch: %d, refused: %d (by Kueue's webhook while it restarted: %d)", probes.Sent, len(probes.Refused), probes.Kueues)
	for _, r := range probes.Ours() {
		t.Errorf("a create refused during the switch, not by Kueue's restarting webhook: %s", r.Err)
	}
	if defaultErr != nil {
		t.Errorf("in namespace %s, with a LocalQueue named default, during the switch: %v", dq, defaultErr)
	}
	ranQueuedOnce(t, dq, unlabelled)
	fixtures.RunQueuedOnce(t, ctx, k8s, dq, "after")

	after := snapshot(t, all)
	for _, tj := range all {
		b, a := before[tj.Name], after[tj.Name]
		if a.workload != b.workload {
			t.Errorf("%s: Workload %s replaced by %s", tj.Name, b.workload, a.workload)
		}
		if b.jobSet != "" && a.jobSet != b.jobSet {
			t.Errorf("%s: JobSet %s replaced by %s", tj.Name, b.jobSet, a.jobSet)
		}
		restarted := false
		for name, uid := range b.pods {
			restarted = restarted || a.pods[name] != uid
		}
		switch {
		case verdicts[tj.Name] == migrate.Stopped:
			queuedAgainByKueuesJobSetIntegration(t, tj)
		case restarted && !a.done:
			t.Errorf("%s: its pods were replaced (%v, were %v)", tj.Name, a.pods, b.pods)
		}
	}
	admittedInOrder(t, first, second)
	for _, tj := range all[1:] {
		if verdicts[tj.Name] != migrate.Stopped {
			fixtures.WaitComplete(t, ctx, k8s, tj, 3*time.Minute)
		}
	}
	for _, tj := range all {
		if verdicts[tj.Name] == migrate.Stopped {
			continue
		}
		if got := snapshot(t, []*trainer.TrainJob{tj})[tj.Name].workload; got != before[tj.Name].workload {
			t.Errorf("%s finished under Workload %s, not its own %s", tj.Name, got, before[tj.Name].workload)
		}
	}
	neverStarted(t, ns, created)
}

// runFor: the running jobs outlast the switch.
const runFor = 90 * time.Second

// checkBeforeTheSwitch runs migrate --check's judgement on the cluster as
// the built-in integration left it: every job adopted (the running ones
// mended at their next stop, since the built-in integration's runtime
// patch is filled on them), none stopped. The switch then bears each
// verdict out: the same Workload, the same pods.
func checkBeforeTheSwitch(t *testing.T, ns string) map[string]migrate.Decision {
	t.Helper()
	c, err := cluster.Client(scheme.New())
	if err != nil {
		t.Fatal(err)
	}
	// With the cluster's Kueue configuration, as an admin passes it
	// (--kueue-config).
	kcfg, err := discovery.LoadKueueConfig(filepath.Join(cluster.Dir, "config", "kueue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	jobSetOff := !discovery.JobSetIntegration(&kcfg)
	verdicts, err := migrate.Check(ctx, c, migrate.Options{Namespace: ns, JobSetIntegrationOff: jobSetOff})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]migrate.Decision{}
	for _, v := range verdicts {
		got[v.Name] = v.Decision
		t.Logf("migrate --check: %s %s: %s (%s)", v.Name, v.State, v.Decision, v.Reason)
	}
	want := map[string]migrate.Decision{
		"finished":  migrate.LeftAlone,
		"with-init": migrate.AdoptedMendedAtNextStop,
		"long":      migrate.AdoptedMendedAtNextStop,
		"first":     migrate.Adopted,
		"second":    migrate.Adopted,
	}
	if strings.HasPrefix(cluster.Settings().KueueVersion, "v0.16.") {
		// Kueue v0.16's webhook copied the queue label into every job's
		// spec.labels, onto the JobSets; the suite runs the runbook's way
		// around it, Kueue's JobSet integration off (docs/install.md).
		want["first"], want["second"] = migrate.AdoptedMendedAtNextStop, migrate.AdoptedMendedAtNextStop
		// Without the configuration the check can't rule that
		// integration out: the running jobs would be stopped, and it
		// says so (migrate --check exits 1).
		unknown, err := migrate.Check(ctx, c, migrate.Options{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		if n := migrate.Stops(unknown); n != 2 {
			t.Errorf("without Kueue's configuration, migrate --check says %d running jobs would be stopped, want 2", n)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("migrate --check before the switch (-want +got):\n%s", diff)
	}
	// migrate --check exits 1 exactly when this is not 0.
	if n := migrate.Stops(verdicts); n != 0 {
		t.Errorf("migrate --check says %d running jobs would be stopped", n)
	}
	return got
}

// checkTheWayBack runs migrate --check --to intree on the jobs
// trainjob-kueue runs, with Kueue's in-tree code against the live API
// server (its dry-run Workload creates): no running job is stopped, and
// the switch then bears it out. With the runtime of a running job edited
// meanwhile, that job is reported stopped (migrate exits 1); the edit is
// taken back before the switch.
func checkTheWayBack(t *testing.T, ns string) {
	t.Helper()
	c, err := cluster.Client(scheme.New())
	if err != nil {
		t.Fatal(err)
	}
	inTree, err := migrate.InTreePodSets(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	check := func() map[string]migrate.Verdict {
		verdicts, err := migrate.Check(ctx, c, migrate.Options{Namespace: ns, To: migrate.ToInTree, InTree: inTree})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]migrate.Verdict{}
		for _, v := range verdicts {
			got[v.Name] = v
			t.Logf("migrate --check --to intree: %s %s: %s (%s)", v.Name, v.State, v.Decision, v.Reason)
		}
		return got
	}
	got := check()
	for name, want := range map[string]migrate.Decision{"finished": migrate.LeftAlone, "with-init": migrate.Adopted, "long": migrate.Adopted} {
		if got[name].Decision != want {
			t.Errorf("the way back for %s: %q (%s), want %q", name, got[name].Decision, got[name].Reason, want)
		}
	}
	rt := &trainer.TrainingRuntime{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "long"}, rt); err != nil {
		t.Fatal(err)
	}
	was := rt.Spec.DeepCopy()
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image += "-edited"
	if err := k8s.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, 30*time.Second, "the edit seen", func() error {
		if v := check()["long"]; v.Decision != migrate.Stopped || !strings.Contains(v.Reason, "TrainingRuntime "+ns+"/long") {
			return fmt.Errorf("long: %q (%s), want stopped, naming its runtime", v.Decision, v.Reason)
		}
		return nil
	})
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
		t.Fatal(err)
	}
	rt.Spec = *was
	if err := k8s.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, 30*time.Second, "the edit taken back", func() error {
		if n := migrate.Stops(slices.Collect(maps.Values(check()))); n != 0 {
			return fmt.Errorf("%d running jobs would be stopped", n)
		}
		return nil
	})
}

// queuedAgainByKueuesJobSetIntegration bears out a "stopped" verdict of
// migrate --check on Kueue v0.16: Kueue's JobSet integration queues the
// running job's JobSet with a Workload of its own, which stops it.
func queuedAgainByKueuesJobSetIntegration(t *testing.T, tj *trainer.TrainJob) {
	t.Helper()
	poll.Eventually(t, 2*time.Minute, tj.Name+"'s JobSet queued by Kueue's JobSet integration", func() error {
		wls := &kueue.WorkloadList{}
		if err := k8s.List(ctx, wls, client.InNamespace(tj.Namespace)); err != nil {
			return err
		}
		for _, wl := range wls.Items {
			for _, o := range wl.OwnerReferences {
				if o.Kind == "JobSet" && o.Name == tj.Name {
					return nil
				}
			}
		}
		return fmt.Errorf("no Workload of JobSet %s", tj.Name)
	})
}

// state is what a switch must keep of a job.
type state struct {
	workload types.UID
	admitted bool
	jobSet   types.UID
	pods     map[string]types.UID
	done     bool
}

func snapshot(t *testing.T, jobs []*trainer.TrainJob) map[string]state {
	t.Helper()
	out := map[string]state{}
	for _, tj := range jobs {
		wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
		if err != nil {
			t.Fatalf("%s's Workload: %v", tj.Name, err)
		}
		s := state{workload: wl.UID, admitted: wl.Status.Admission != nil, pods: map[string]types.UID{},
			done: apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)}
		js := &jobsetapi.JobSet{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), js); err == nil {
			s.jobSet = js.UID
		}
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(tj.Namespace), client.MatchingLabels{"jobset.sigs.k8s.io/jobset-name": tj.Name}); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			s.pods[p.Name] = p.UID
		}
		out[tj.Name] = s
	}
	return out
}

// createThroughout creates a queued TrainJob every two seconds until stop,
// on a LocalQueue that does not exist (so none is admitted), and returns
// the names of those the API server took: a create refused while a
// webhook restarts is no escape, a job created unsuspended is.
func createThroughout(t *testing.T, ns string, stop <-chan struct{}) []string {
	var names []string
	for i := 0; ; i++ {
		select {
		case <-stop:
			return names
		case <-time.After(2 * time.Second):
		}
		tj := fixtures.TrainJob(ns, fmt.Sprintf("during-%d", i), "short", "nowhere")
		if err := k8s.Create(ctx, tj); err != nil {
			t.Logf("creating %s during the switch: %v (refused, not escaped)", tj.Name, err)
			continue
		}
		names = append(names, tj.Name)
	}
}

// watchInvariants polls, until stop, that no ClusterQueue is over its
// quota and no job has more than one Workload.
func watchInvariants(ns string, jobs []*trainer.TrainJob, stop <-chan struct{}) error {
	var errs []error
	for {
		select {
		case <-stop:
			return errors.Join(errs...)
		case <-time.After(poll.Interval):
		}
		cq := &kueue.ClusterQueue{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: ns}, cq); err == nil {
			for _, fu := range cq.Status.FlavorsUsage {
				for _, ru := range fu.Resources {
					if ru.Name == "nvidia.com/gpu" && ru.Total.Value() > 8 {
						errs = append(errs, fmt.Errorf("ClusterQueue %s uses %s GPUs of 8", ns, ru.Total.String()))
					}
				}
			}
		}
		wls := &kueue.WorkloadList{}
		if err := k8s.List(ctx, wls, client.InNamespace(ns)); err != nil {
			continue
		}
		owners := map[types.UID]int{}
		for _, wl := range wls.Items {
			for _, o := range wl.OwnerReferences {
				owners[o.UID]++
			}
		}
		for uid, n := range owners {
			if n > 1 {
				errs = append(errs, fmt.Errorf("TrainJob %s has %d Workloads", uid, n))
			}
		}
	}
}

// admittedInOrder: the job queued first was admitted first.
func admittedInOrder(t *testing.T, first, second *trainer.TrainJob) {
	t.Helper()
	at := func(tj *trainer.TrainJob) time.Time {
		var when time.Time
		poll.Eventually(t, 3*time.Minute, tj.Name+" admitted", func() error {
			wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
			if err != nil {
				return err
			}
			c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
			if c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("not admitted")
			}
			when = c.LastTransitionTime.Time
			return nil
		})
		return when
	}
	a, b := at(first), at(second)
	if b.Before(a) {
		t.Errorf("%s (queued second) was admitted at %s, before %s (queued first) at %s", second.Name, b, first.Name, a)
	}
}

// neverStarted: every job created during the switch is suspended and has
// no pods.
func neverStarted(t *testing.T, ns string, names []string) {
	t.Helper()
	if len(names) == 0 {
		t.Fatal("no job was created during the switch")
	}
	for _, name := range names {
		tj := &trainer.TrainJob{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tj); err != nil {
			t.Fatal(err)
		}
		if tj.Spec.Suspend == nil || !*tj.Spec.Suspend {
			t.Errorf("%s, created during the switch with a queue name, is not suspended: it escaped the queue", name)
		}
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"jobset.sigs.k8s.io/jobset-name": name}); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) > 0 {
			t.Errorf("%s, created during the switch on a queue that admits nothing, has %d pods", name, len(pods.Items))
		}
	}
}

func hasWorkload(t *testing.T, tj *trainer.TrainJob) {
	t.Helper()
	poll.Eventually(t, time.Minute, tj.Name+"'s Workload", func() error {
		_, err := fixtures.WorkloadOf(ctx, k8s, tj)
		return err
	})
}

func running(t *testing.T, tj *trainer.TrainJob) {
	t.Helper()
	fixtures.WaitRunning(t, ctx, k8s, tj)
}
