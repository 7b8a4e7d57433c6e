// Package noticebench measures what the preemption notice saves: a
// ClusterQueue under churn, high-priority arrivals preempting running
// jobs that checkpoint every minute and react to the notice as a
// training loop would, with the notice, without it, and under Kueue's
// built-in integration. A benchmark, not a test: make bench-notice,
// docs/benchmark.md "Preemption notice".
package notice_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// The churn, compressed: four jobs of 4 GPUs fill a ClusterQueue of 16;
// every arrivalEvery an arrival of higher priority takes one's place for
// arrivalRuns; each running job checkpoints every checkpointEvery, and
// reacts to a notice by checkpointing reactIn after it sees it.
const (
	jobs            = 4
	gpusPerJob      = 4
	arrivals        = 8
	arrivalEvery    = 25 * time.Second
	arrivalRuns     = 10 * time.Second
	checkpointEvery = time.Minute
	reactIn         = time.Second
	notice          = 120 * time.Second
	// every is how often the bench looks (the training's clock, and the
	// resolution of its figures).
	every = 250 * time.Millisecond
)

// setup is one way of running the churn.
type setup struct {
	name        string
	integration string
	policy      string
	// restart: trainjob-kueue is killed (SIGKILL) in one notice and
	// started again 10 s later.
	restart bool
}

var setups = []setup{
	{name: "intree", integration: localcluster.IntegrationInTree},
	{name: "ours-no-notice", integration: localcluster.IntegrationOurs},
	{name: "ours-notice", integration: localcluster.IntegrationOurs, policy: fmt.Sprintf(`{"notice":{"seconds":%d}}`, int(notice/time.Second)), restart: true},
}

// BenchmarkPreemptionNotice: per set-up, the work lost per preemption
// (GPU-seconds since the victim's last checkpoint when it was stopped),
// the arrivals' wait from creation to admission (p50, p99), the notices
// that ran out, and the notices lost across the manager's restart (a
// victim stopped later than its notice's end). Run it with -benchtime=1x.
func BenchmarkPreemptionNotice(b *testing.B) {
	for _, s := range setups {
		b.Run(s.name, func(b *testing.B) {
			ctx := context.Background()
			k8s, cluster, down := clusterFor(b, ctx, s)
			defer down()
			r := churn(b, ctx, k8s, cluster, s)
			b.ReportMetric(float64(len(r.stops)), "preemptions")
			b.ReportMetric(r.lostPerPreemption(false), "gpu-s-lost/preemption")
			if s.restart {
				b.ReportMetric(r.lostPerPreemption(true), "gpu-s-lost/preemption-across-restart")
			}
			b.ReportMetric(quantile(r.waits(), 0.5).Seconds(), "s-arrival-wait-p50")
			b.ReportMetric(quantile(r.waits(), 0.99).Seconds(), "s-arrival-wait-p99")
			b.ReportMetric(float64(r.ranOut()), "notices-ran-out")
			b.ReportMetric(float64(r.lateStops()), "notices-lost")
		})
	}
}

func clusterFor(b *testing.B, ctx context.Context, s setup) (client.Client, *localcluster.Cluster, func()) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	o := localcluster.Options{Root: root}
	o.TrainerVersion, o.Integration = localcluster.NewestTrainerVersion, s.integration
	c, stop, err := localcluster.UpForTests(ctx, localcluster.ForTests("bench-notice-"+s.name, o))
	if err != nil {
		b.Fatal(err)
	}
	k8s, err := c.UnthrottledClient(fixtures.Scheme())
	if err != nil {
		stop()
		b.Fatal(err)
	}
	return k8s, c, stop
}

// stop is one preemption as the bench saw it.
type stop struct {
	job string
	// evicted: Kueue's eviction; stopped: the job seen suspended;
	// checkpoint: its last checkpoint then (or its start).
	evicted, stopped, checkpoint time.Time
	// until: the notice's end, when it had one.
	until time.Time
	// acrossRestart: trainjob-kueue was killed and started again in this
	// victim's notice.
	acrossRestart bool
}

// result of one set-up's churn.
type result struct {
	stops    []stop
	created  map[string]time.Time
	admitted map[string]time.Time
	// outcomes of the notices, from trainjob-kueue's events.
	outcomes map[string]int
}

// lostPerPreemption is the GPU-seconds lost per preemption, across the
// restart or not.
func (r *result) lostPerPreemption(acrossRestart bool) float64 {
	var sum float64
	n := 0
	for _, s := range r.stops {
		if s.acrossRestart == acrossRestart {
			sum += s.stopped.Sub(s.checkpoint).Seconds() * gpusPerJob
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func (r *result) waits() []time.Duration {
	var out []time.Duration
	for name, at := range r.admitted {
		out = append(out, at.Sub(r.created[name]))
	}
	return out
}

func (r *result) ranOut() int { return r.outcomes["RanOut"] }

// lateStops: victims stopped more than a look and a reconcile after
// their notice's end.
func (r *result) lateStops() int {
	n := 0
	for _, s := range r.stops {
		if !s.until.IsZero() && s.stopped.After(s.until.Add(5*time.Second)) {
			n++
		}
	}
	return n
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

// training is the bench's model of one low-priority job's training loop.
type training struct {
	running    bool
	checkpoint time.Time
	// reactAt: when it checkpoints for the notice it saw (zero: none).
	reactAt time.Time
	told    string
	// restartedIn: trainjob-kueue was restarted in this job's notice.
	restartedIn bool
}

// churn runs the load of set-up s and returns what it saw.
func churn(b *testing.B, ctx context.Context, k8s client.Client, cluster *localcluster.Cluster, s setup) *result {
	ns := setUp(b, ctx, k8s, s)
	r := &result{created: map[string]time.Time{}, admitted: map[string]time.Time{}, outcomes: map[string]int{}}
	loops := map[string]*training{}
	for i := range jobs {
		tj := fixtures.TrainJob(ns, fmt.Sprintf("train-%d", i), "long", "lq")
		tj.Labels[constants.WorkloadPriorityClassLabel] = "bench-low"
		fixtures.Create(b, ctx, k8s, tj)
		loops[tj.Name] = &training{}
	}
	b.ResetTimer()
	start := time.Now()
	next, restarted := 0, !s.restart
	for {
		now := time.Now()
		if next < arrivals && now.After(start.Add(30*time.Second+time.Duration(next)*arrivalEvery)) {
			tj := fixtures.TrainJob(ns, fmt.Sprintf("arrival-%d", next), "short", "lq")
			tj.Labels[constants.WorkloadPriorityClassLabel] = "bench-high"
			fixtures.Create(b, ctx, k8s, tj)
			r.created[tj.Name] = now
			next++
		}
		look(b, ctx, k8s, ns, loops, r, now)
		if !restarted && reacting(loops) && next >= 3 {
			restart(b, ctx, cluster, loops, k8s, ns, r)
			restarted = true
		}
		if next == arrivals && len(r.admitted) == arrivals {
			break
		}
		if time.Since(start) > 15*time.Minute {
			b.Fatalf("the churn did not end in 15 minutes: %d of %d arrivals admitted", len(r.admitted), arrivals)
		}
		time.Sleep(every)
	}
	b.StopTimer()
	countOutcomes(b, ctx, k8s, ns, r)
	return r
}

// reacting: a job saw its notice and has not checkpointed for it yet.
func reacting(loops map[string]*training) bool {
	for _, l := range loops {
		if l.running && !l.reactAt.IsZero() {
			return true
		}
	}
	return false
}

// restart kills trainjob-kueue in a notice and starts it again 10 s
// later, the training loops running on meanwhile.
func restart(b *testing.B, ctx context.Context, cluster *localcluster.Cluster, loops map[string]*training, k8s client.Client, ns string, r *result) {
	if err := cluster.Kill("trainjob-kueue"); err != nil {
		b.Fatal(err)
	}
	for _, l := range loops {
		if l.running && !l.reactAt.IsZero() {
			l.restartedIn = true
		}
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(every) {
		look(b, ctx, k8s, ns, loops, r, time.Now())
	}
	if err := cluster.Start(ctx, "trainjob-kueue"); err != nil {
		b.Fatal(err)
	}
}

// look is one tick of the training loops and the bench's watch: it
// reports checkpoints when due and for a notice, and records stops and
// admissions.
func look(b *testing.B, ctx context.Context, k8s client.Client, ns string, loops map[string]*training, r *result, now time.Time) {
	var tjs trainer.TrainJobList
	var wls kueue.WorkloadList
	if err := k8s.List(ctx, &tjs, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	if err := k8s.List(ctx, &wls, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	byJob := map[string]*kueue.Workload{}
	for i := range wls.Items {
		if owner := metav1.GetControllerOf(&wls.Items[i]); owner != nil {
			byJob[owner.Name] = &wls.Items[i]
		}
	}
	for i := range tjs.Items {
		tj := &tjs.Items[i]
		wl := byJob[tj.Name]
		if wl == nil {
			continue
		}
		if _, arrival := r.created[tj.Name]; arrival {
			if _, seen := r.admitted[tj.Name]; !seen && apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
				r.admitted[tj.Name] = now
			}
			continue
		}
		train(b, ctx, k8s, tj, wl, loops[tj.Name], r, now)
	}
}

// train plays one job's loop for this tick.
func train(b *testing.B, ctx context.Context, k8s client.Client, tj *trainer.TrainJob, wl *kueue.Workload, l *training, r *result, now time.Time) {
	suspended := tj.Spec.Suspend != nil && *tj.Spec.Suspend
	active := false
	for _, s := range tj.Status.JobsStatus {
		if s.Active != nil && *s.Active > 0 {
			active = true
		}
	}
	switch {
	case !l.running && !suspended && active:
		*l = training{running: true, checkpoint: now}
	case l.running && suspended:
		l.running = false
		st := stop{job: tj.Name, stopped: now, checkpoint: l.checkpoint, acrossRestart: l.restartedIn}
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
			st.evicted = c.LastTransitionTime.Time
		}
		if until, ok := noticeEnd(wl); ok {
			st.until = until
		}
		r.stops = append(r.stops, st)
		return
	}
	if !l.running {
		return
	}
	if v := wl.Annotations[names.PreemptingAnnotation]; v != "" && v != l.told {
		l.told, l.reactAt = v, now.Add(reactIn)
	}
	switch {
	case !l.reactAt.IsZero() && !now.Before(l.reactAt):
		l.reactAt = time.Time{}
		report(b, ctx, k8s, tj, now)
		l.checkpoint = now
	case now.Sub(l.checkpoint) >= checkpointEvery:
		report(b, ctx, k8s, tj, now)
		l.checkpoint = now
	}
}

// report sets the job's last checkpoint as Trainer's status server does.
func report(b *testing.B, ctx context.Context, k8s client.Client, tj *trainer.TrainJob, at time.Time) {
	patch := fmt.Appendf(nil, `{"status":{"trainerStatus":{"metrics":[{"name":"last_checkpoint_unix_seconds","value":"%d"}],"lastUpdatedTime":%q}}}`,
		at.Unix(), at.UTC().Format(time.RFC3339))
	if err := k8s.Status().Patch(ctx, tj.DeepCopy(), client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
		b.Fatalf("reporting %s's checkpoint: %v", tj.Name, err)
	}
}

// noticeEnd is the end of the notice written on wl.
func noticeEnd(wl *kueue.Workload) (time.Time, bool) {
	var n struct{ Until int64 }
	v := wl.Annotations[names.PreemptingAnnotation]
	if v == "" || json.Unmarshal([]byte(v), &n) != nil {
		return time.Time{}, false
	}
	return time.Unix(n.Until, 0), true
}

// countOutcomes reads the notices' outcomes from trainjob-kueue's events.
func countOutcomes(b *testing.B, ctx context.Context, k8s client.Client, ns string, r *result) {
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "PreemptionNoticeEnded" {
			outcome, _, _ := strings.Cut(e.Message, ":")
			r.outcomes[outcome] += int(max(e.Count, 1))
		}
	}
}

// setUp makes the namespace, the nodes, the ClusterQueue (with s's
// policy), the priority classes and the runtimes of the churn.
func setUp(b *testing.B, ctx context.Context, k8s client.Client, s setup) string {
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "notice-"}}
	fixtures.Create(b, ctx, k8s, nsObj)
	ns := nsObj.Name
	p := fixtures.Pool{Name: "gpu", Labels: map[string]string{fixtures.PoolLabel: ns}, GPUs: jobs * gpusPerJob}
	for i := range jobs {
		if err := localcluster.AddNode(ctx, k8s, fixtures.Node(fmt.Sprintf("%s-%d", ns, i), p, gpusPerJob)); err != nil {
			b.Fatal(err)
		}
	}
	flavors, cq, lq := fixtures.Queue(ns, ns, p)
	if s.policy != "" {
		cq.Annotations = map[string]string{names.PreemptionCostAnnotation: s.policy}
	}
	for _, rf := range flavors {
		fixtures.Create(b, ctx, k8s, rf)
	}
	fixtures.Create(b, ctx, k8s, cq, lq,
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "bench-low"}, Value: 100},
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "bench-high"}, Value: 10000},
		fixtures.TrainingRuntime(ns, "long", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(gpusPerJob), Annotations: fixtures.RunFor(time.Hour)}),
		fixtures.TrainingRuntime(ns, "short", fixtures.TorchPolicy(1),
			fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.GPUs(gpusPerJob), Annotations: fixtures.RunFor(arrivalRuns)}))
	fixtures.WaitActive(b, ctx, k8s, cq.Name, 30*time.Second)
	return ns
}
