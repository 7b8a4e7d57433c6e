package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/bench/loadharness"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// sample of both managers at one moment, from outside them.
type sample struct {
	At            float64 `json:"t_s"`
	Phase         string  `json:"phase"`
	Workloads     int     `json:"workloads"`
	OursRSSMiB    float64 `json:"ours_rss_mib"`
	KueueRSSMiB   float64 `json:"kueue_rss_mib"`
	OursHeapMiB   float64 `json:"ours_heap_mib"`
	KueueHeapMiB  float64 `json:"kueue_heap_mib"`
	OursReconcile float64 `json:"ours_reconciles"`
}

// sampler reads /proc and both managers' metrics every period.
type sampler struct {
	c     *localcluster.Cluster
	token string
	start time.Time
	rec   *recorder

	mu      sync.Mutex
	phase   string
	samples []sample
	// peak VmHWM of every process ours ran as (it restarts).
	oursHWM, kueueHWM float64
}

func (s *sampler) setPhase(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = p
	fmt.Fprintf(os.Stderr, ">> %s (%.0fs)\n", p, time.Since(s.start).Seconds())
}

func (s *sampler) run(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		s.take()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *sampler) take() sample {
	ours, kueueProc := procMem(s.c.PID("trainjob-kueue")), procMem(s.c.PID("kueue"))
	om := s.metrics("ours-metrics")
	km := s.metrics("kueue-metrics")
	s.mu.Lock()
	defer s.mu.Unlock()
	x := sample{
		At: time.Since(s.start).Seconds(), Phase: s.phase, Workloads: s.rec.queued(),
		OursRSSMiB: ours.rss, KueueRSSMiB: kueueProc.rss,
		OursHeapMiB: om["go_memstats_heap_alloc_bytes"] / (1 << 20), KueueHeapMiB: km["go_memstats_heap_alloc_bytes"] / (1 << 20),
		OursReconcile: ourReconciles(om),
	}
	s.oursHWM = max(s.oursHWM, ours.hwm)
	s.kueueHWM = max(s.kueueHWM, kueueProc.hwm)
	s.samples = append(s.samples, x)
	return x
}

// metrics scrapes a manager's metrics endpoint: the unlabelled values, and
// counters summed over their labels.
func (s *sampler) metrics(port string) map[string]float64 {
	body, err := s.c.Scrape(fmt.Sprintf("https://127.0.0.1:%d/metrics", s.c.Port(port)), s.token)
	if err != nil {
		return map[string]float64{}
	}
	return parseMetrics(body)
}

func parseMetrics(body []byte) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		series := line[:sp]
		name := series
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i]
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		out[name] += v
		if name != series {
			// By series too: sums over some of its labels are asked
			// (ourReconciles).
			out[series] = v
		}
	}
	return out
}

type mem struct{ rss, hwm float64 }

// procMem reads a process's resident and peak resident memory in MiB.
func procMem(pid int) mem {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return mem{}
	}
	var m mem
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kib, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			m.rss = kib / 1024
		case "VmHWM:":
			m.hwm = kib / 1024
		}
	}
	return m
}

// ready reports whether a plain-HTTP readiness endpoint answers 200.
func ready(url string) bool {
	resp, err := http.Get(url) //nolint:gosec // loopback health endpoint of the local cluster
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// times of one job, first seen on watch events.
type times struct{ admitted, unsuspended time.Time }

// recorder watches Workloads and TrainJobs of the load.
type recorder struct {
	mu        sync.Mutex
	jobs      map[string]*times
	workloads map[string]bool
	// reported: jobs Trainer has written a status for, which v2.3 does
	// after it took the job's runtime snapshot.
	reported map[string]bool
	// jobOfWorkload: the TrainJob owning each Workload, by Workload name.
	jobOfWorkload map[string]string
}

func newRecorder() *recorder {
	return &recorder{jobs: map[string]*times{}, workloads: map[string]bool{}, reported: map[string]bool{}, jobOfWorkload: map[string]string{}}
}

// jobOf is the TrainJob a Workload belongs to, "" if not one of the load's.
func (r *recorder) jobOf(workload string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.jobOfWorkload[workload]
}

// seen: the Workloads queued so far, and the TrainJobs Trainer has
// reported on.
// queued: the Workloads queued so far.
func (r *recorder) queued() int { n, _ := r.seen(); return n }

// reported: the TrainJobs Trainer has reported on so far.
func (r *recorder) reportedJobs() int { _, n := r.seen(); return n }

func (r *recorder) seen() (workloads, reported int) {
	r.mu.Lock()
	n, m := len(r.workloads), len(r.reported)
	r.mu.Unlock()
	return n, m
}

// counts of admitted and of admitted-and-unsuspended jobs.
func (r *recorder) counts() (admitted, started int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.jobs {
		if !t.admitted.IsZero() {
			admitted++
			if !t.unsuspended.IsZero() {
				started++
			}
		}
	}
	return admitted, started
}

func (r *recorder) watch(ctx context.Context, cfg *rest.Config, c client.Client) error {
	return loadharness.Watch(ctx, cfg, c.Scheme(), ns, loadharness.Handlers{
		&kueue.Workload{}: loadharness.Seen(&r.mu, func(wl *kueue.Workload, now time.Time) {
			job := loadharness.TrainJobOf(wl)
			if job == "" {
				return
			}
			r.workloads[job] = true
			r.jobOfWorkload[wl.Name] = job
			if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
				loadharness.First(&loadharness.Entry(r.jobs, job).admitted, now)
			}
		}),
		&trainer.TrainJob{}: loadharness.Seen(&r.mu, func(tj *trainer.TrainJob, now time.Time) {
			if len(tj.Status.Conditions) > 0 || len(tj.Status.JobsStatus) > 0 {
				r.reported[tj.Name] = true
			}
			if ptr.Deref(tj.Spec.Suspend, true) {
				return
			}
			loadharness.First(&loadharness.Entry(r.jobs, tj.Name).unsuspended, now)
		}),
	})
}

// requests counts user's successful API requests in [from, to), by "verb
// resource[/subresource]".
func requests(c *localcluster.Cluster, user string, from, to time.Time) (map[string]int, error) {
	events, err := localcluster.AuditEvents(c.AuditLog(), func(e *localcluster.AuditEvent) bool {
		return e.User.Username == user && !e.Received.Before(from) && e.Received.Before(to)
	})
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range events {
		if e.ResponseStatus == nil || e.ResponseStatus.Code >= 400 || e.ObjectRef == nil {
			continue
		}
		what := e.Verb + " " + e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			what += "/" + e.ObjectRef.Subresource
		}
		out[what]++
	}
	return out, nil
}

// writes among requests by verb, but for the leader election lease's
// renewals (every 2 s, whatever happens), Events, and token/access reviews.
func writes(byVerb map[string]int) int {
	n := 0
	for what, k := range byVerb {
		f := strings.Fields(what)
		// Reviews are questions to the API server, not state.
		if len(f) < 2 || f[1] == "leases" || f[1] == "events" || strings.HasSuffix(f[1], "reviews") {
			continue
		}
		switch f[0] {
		case "create", "update", "patch", "delete", "deletecollection":
			n += k
		}
	}
	return n
}

// ourReconciles sums controller-runtime's reconcile counter of the TrainJob
// controller over its results.
func ourReconciles(m map[string]float64) float64 {
	var n float64
	for series, v := range m {
		if strings.HasPrefix(series, `controller_runtime_reconcile_total{controller="trainjob",`) {
			n += v
		}
	}
	return n
}
