package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// times of one job, as the benchmark saw them: measured from outside the
// integration, on watch events.
type times struct {
	created, workload, reserved, admitted, unsuspended, running, finished time.Time
	// holding: the job's Workload, as last seen, is admitted and not
	// finished.
	holding bool
}

// recorder keeps the first time each milestone was seen, per job.
type recorder struct {
	mu   sync.Mutex
	jobs map[string]*times
	// pods running per job, of role "node".
	running  map[string]map[string]bool
	expected map[string]int
	// hold: a harness-scale run (-hold), where a job is done once its
	// Workload holds its quota reservation.
	hold bool
}

func newRecorder() *recorder {
	return &recorder{jobs: map[string]*times{}, running: map[string]map[string]bool{}, expected: map[string]int{}}
}

func (r *recorder) created(job string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	loadharness.First(&loadharness.Entry(r.jobs, job).created, now)
}

// states is unfinishedStates of the jobs seen so far.
func (r *recorder) states() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return unfinishedStates(r.jobs)
}

func (r *recorder) finishedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, t := range r.jobs {
		if !t.finished.IsZero() {
			n++
		}
	}
	return n
}

// watch records milestones from informers on Workloads, TrainJobs and
// pods; floor marks admitted Workloads finished after runFor, playing the
// job that would have run.
func (r *recorder) watch(ctx context.Context, cfg *rest.Config, c client.Client, floor bool, runFor time.Duration, nodePods map[string]int) error {
	handlers := loadharness.Handlers{&kueue.Workload{}: r.onWorkload(ctx, c, floor, runFor)}
	if !floor {
		handlers[&trainer.TrainJob{}] = r.onTrainJob(nodePods)
		handlers[&corev1.Pod{}] = r.onPod()
	}
	return loadharness.Watch(ctx, cfg, c.Scheme(), ns, handlers)
}

// onWorkload records when a job's Workload appeared, was admitted and
// finished; on the floor (bare Workloads) it finishes each admitted one
// after runFor, as a job's pods would.
func (r *recorder) onWorkload(ctx context.Context, c client.Client, floor bool, runFor time.Duration) func(obj any) {
	return func(obj any) {
		wl, ok := obj.(*kueue.Workload)
		if !ok {
			return
		}
		job := wl.Name
		if owner := loadharness.TrainJobOf(wl); owner != "" {
			job = owner
		}
		now := time.Now()
		r.mu.Lock()
		t := loadharness.Entry(r.jobs, job)
		loadharness.First(&t.workload, now)
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
			loadharness.First(&t.reserved, now)
			if r.hold {
				loadharness.First(&t.finished, now)
			}
		}
		admitted := apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted)
		if admitted {
			loadharness.First(&t.admitted, now)
		}
		done := apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
		if done {
			loadharness.First(&t.finished, now)
		}
		t.holding = admitted && !done
		r.mu.Unlock()
		if floor && admitted && !done {
			go finishAfter(ctx, c, wl.Name, runFor)
		}
	}
}

// onTrainJob records when a job was unsuspended and finished, and how many
// trainer pods it runs (its runtime's, nodePods).
func (r *recorder) onTrainJob(nodePods map[string]int) func(obj any) {
	return loadharness.Seen(&r.mu, func(tj *trainer.TrainJob, now time.Time) {
		t := loadharness.Entry(r.jobs, tj.Name)
		if !ptr.Deref(tj.Spec.Suspend, true) {
			loadharness.First(&t.unsuspended, now)
		}
		if apimeta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobComplete) || apimeta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobFailed) {
			loadharness.First(&t.finished, now)
		}
		r.expected[tj.Name] = nodePods[tj.Spec.RuntimeRef.Name]
	})
}

// onPod records when all of a job's trainer pods run.
func (r *recorder) onPod() func(obj any) {
	return func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Labels[jobsetapi.ReplicatedJobNameKey] != "node" || p.Status.Phase != corev1.PodRunning {
			return
		}
		job := p.Labels[jobsetapi.JobSetNameKey]
		now := time.Now()
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.running[job] == nil {
			r.running[job] = map[string]bool{}
		}
		r.running[job][p.Name] = true
		if want := r.expected[job]; want > 0 && len(r.running[job]) >= want {
			loadharness.First(&loadharness.Entry(r.jobs, job).running, now)
		}
	}
}

// finishAfter plays a finished job for the floor's bare Workloads.
func finishAfter(ctx context.Context, c client.Client, name string, runFor time.Duration) {
	time.Sleep(runFor)
	for range 20 {
		wl := &kueue.Workload{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, wl); err != nil {
			return
		}
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return
		}
		apimeta.SetStatusCondition(&wl.Status.Conditions, kueueFinished())
		if err := c.Status().Update(ctx, wl); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// usage of a process: CPU seconds so far and peak resident memory.
type usage struct {
	cpuSeconds float64
	peakRSSMiB float64
}

// procUsage reads /proc for pid (0: none).
func procUsage(pid int) (usage, error) {
	if pid == 0 {
		return usage{}, nil
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return usage{}, err
	}
	// Fields after the command name (which may hold spaces).
	rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseFloat(rest[11], 64)
	stime, _ := strconv.ParseFloat(rest[12], 64)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return usage{}, err
	}
	var hwmKiB float64
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			hwmKiB, _ = strconv.ParseFloat(f[1], 64)
		}
	}
	// Clock ticks are 100 per second on Linux.
	return usage{cpuSeconds: (utime + stime) / 100, peakRSSMiB: hwmKiB / 1024}, nil
}

// requests counts the successful API requests user made from since on, by
// "verb resource[/subresource]", the dry runs among them, and the writes of
// Workload status by field manager (the query's fieldManager): what each
// was for, since the job framework and Kueue's scheduler name theirs
// (kueue-job-controller-PodsReady, kueue-reclaimable-pods, kueue-admission).
func requests(c *localcluster.Cluster, user string, since time.Time) (n requestCounts, err error) {
	events, err := localcluster.AuditEvents(c.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return e.User.Username == user && !e.Received.Before(since)
	})
	if err != nil {
		return n, err
	}
	return countRequests(events), nil
}

type requestCounts struct {
	dryRuns       int
	byVerb        map[string]int
	statusByOwner map[string]int
}

func countRequests(events []localcluster.AuditEvent) requestCounts {
	n := requestCounts{byVerb: map[string]int{}, statusByOwner: map[string]int{}}
	for _, e := range events {
		if e.ResponseStatus == nil || e.ResponseStatus.Code >= 400 {
			continue
		}
		what := e.Verb + " " + e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			what += "/" + e.ObjectRef.Subresource
		}
		n.byVerb[what]++
		if strings.Contains(e.RequestURI, "dryRun") {
			n.dryRuns++
		}
		if e.ObjectRef.Resource == "workloads" && e.ObjectRef.Subresource == "status" && (e.Verb == "patch" || e.Verb == "update") {
			n.statusByOwner[fieldManager(e.RequestURI)]++
		}
	}
	return n
}

// fieldManager is a request's fieldManager query parameter, "(none)"
// without one.
func fieldManager(requestURI string) string {
	u, err := url.Parse(requestURI)
	if err != nil {
		return "(none)"
	}
	if m := u.Query().Get("fieldManager"); m != "" {
		return m
	}
	return "(none)"
}

// savePprof saves what a pprof endpoint answers: a CPU profile, an
// execution trace.
func savePprof(url, path string) {
	resp, err := http.Get(url) //nolint:gosec // loopback pprof endpoint of the local cluster
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %s: %v\n", path, err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %s: %v\n", path, err)
		return
	}
	defer f.Close()
	_, _ = io.Copy(f, resp.Body)
}

// saveMetrics keeps one scrape of trainjob-kueue's metrics endpoint.
func saveMetrics(ctx context.Context, c *localcluster.Cluster, path string) error {
	token, err := c.MetricsToken(ctx)
	if err != nil {
		return err
	}
	body, err := c.Scrape(fmt.Sprintf("https://127.0.0.1:%d/metrics", c.Port("ours-metrics")), token)
	if err != nil {
		return err
	}
	return os.WriteFile(path, body, 0o644)
}
