package explain

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/preemptcost"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A pending job in a cohort, everything shown: the columns line up.
func TestWriteTextOfAPendingJob(t *testing.T) {
	ex := Explanation{
		Job: "ml/llama", LocalQueue: "team-a", ClusterQueue: "cq-a", Cohort: "research", State: lifecycle.Queued,
		Position: &Position{InLocalQueue: 3, InClusterQueue: 7},
		Roles: []roleExplanation{
			{Name: "launcher", Count: 1, PerPod: fixtures.Requests(t, "cpu", "2", "memory", "4Gi"), Total: fixtures.Requests(t, "cpu", "2", "memory", "4Gi"),
				Candidates: []forecast.Candidate{{Flavor: "cpu-nodes", Fit: forecast.Fits}}},
			{Name: "node", Count: 4, PerPod: fixtures.Requests(t, "cpu", "8", "nvidia.com/gpu", "8"), Total: fixtures.Requests(t, "cpu", "32", "nvidia.com/gpu", "32"),
				Candidates: []forecast.Candidate{
					{Flavor: "a100", Fit: forecast.NoFit, Short: fixtures.Requests(t, "nvidia.com/gpu", "16")},
					{Flavor: "h100", Fit: forecast.Borrows, Borrowed: fixtures.Requests(t, "nvidia.com/gpu", "8")},
					{Flavor: "spot", Fit: forecast.Ineligible, Why: "the pods don't tolerate the flavor's node taint spot=true:NoSchedule"},
				}},
		},
		Quota: []quotaLine{
			{Flavor: "a100", Resource: fixtures.GPU, Nominal: resource.MustParse("16"), Used: resource.MustParse("16"), CohortLends: resource.MustParse("8")},
			{Flavor: "h100", Resource: fixtures.GPU, Nominal: resource.MustParse("24"), BorrowingLimit: ptr.To(resource.MustParse("8")), CohortLends: resource.MustParse("8")},
		},
		KueueSays: "couldn't assign flavors to pod set node",
		Verdict:   "fits now by borrowing 8 nvidia.com/gpu of flavor h100 from cohort research",
	}
	want := `TrainJob:  ml/llama
Queue:     team-a → ClusterQueue cq-a (cohort research)
State:     Queued
Position:  3 in LocalQueue, 7 in ClusterQueue

ROLE      PODS  PER POD                 TOTAL                     FLAVOR
launcher  1     cpu=2 memory=4Gi        cpu=2 memory=4Gi          cpu-nodes (fits)
node      4     cpu=8 nvidia.com/gpu=8  cpu=32 nvidia.com/gpu=32  a100 (short 16 nvidia.com/gpu), h100 (borrows 8 nvidia.com/gpu), spot (ineligible)

QUOTA OF cq-a  RESOURCE        NOMINAL  BORROWING LIMIT  USED  COHORT LENDS
a100           nvidia.com/gpu  16       -                16    8
h100           nvidia.com/gpu  24       8                0     8

Kueue says:  couldn't assign flavors to pod set node
Verdict:     fits now by borrowing 8 nvidia.com/gpu of flavor h100 from cohort research
`
	var out bytes.Buffer
	if err := ex.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

// columns is a text's lines with the alignment taken out: cells joined by
// " | ".
func columns(text string) []string {
	gap := regexp.MustCompile(` {2,}`)
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		out = append(out, gap.ReplaceAllString(line, " | "))
	}
	return out
}

func TestWriteText(t *testing.T) {
	node := func(perPod, total corev1.ResourceList, flavors map[corev1.ResourceName]string, candidates ...forecast.Candidate) []roleExplanation {
		return []roleExplanation{{Name: "node", Count: 2, PerPod: perPod, Total: total, Flavors: flavors, Candidates: candidates}}
	}
	gpus := func(n string) corev1.ResourceList { return fixtures.Requests(t, "nvidia.com/gpu", n) }
	pending := Explanation{Job: "ml/llama", LocalQueue: "team-a", ClusterQueue: "cq-a", State: lifecycle.Queued, Verdict: "pending"}
	with := func(edit func(*Explanation)) Explanation {
		ex := pending
		edit(&ex)
		return ex
	}
	cases := map[string]struct {
		ex Explanation
		// want are lines of the output, cells joined by " | ".
		want []string
		// notWant are texts the output must not have.
		notWant []string
	}{
		"a job in no queue": {
			ex:      Explanation{Job: "ml/llama", State: lifecycle.NotQueued, Verdict: "not queued"},
			want:    []string{"TrainJob: | ml/llama", "Queue: | (none)", "State: | NotQueued", "Verdict: | not queued"},
			notWant: []string{"Position:", "Pods from:", "QUOTA OF", "Kueue says:"},
		},
		"a LocalQueue whose ClusterQueue does not exist": {
			ex:   with(func(ex *Explanation) { ex.ClusterQueue = "" }),
			want: []string{"Queue: | team-a"},
		},
		"a ClusterQueue in no cohort": {
			ex:      pending,
			want:    []string{"Queue: | team-a → ClusterQueue cq-a"},
			notWant: []string{"cohort"},
		},
		"pods computed from Trainer's snapshot of the runtime": {
			ex: with(func(ex *Explanation) {
				ex.RuntimeFrom = "Trainer's snapshot of the runtime, ConfigMap ml/llama-runtime-snapshot"
			}),
			want: []string{"Pods from: | Trainer's snapshot of the runtime, ConfigMap ml/llama-runtime-snapshot"},
		},
		"a pending job whose position is unknown": {
			ex:   with(func(ex *Explanation) { ex.PositionNote = "Kueue's visibility API is not served on this cluster" }),
			want: []string{"Position: | unknown (Kueue's visibility API is not served on this cluster)"},
		},
		// Only a pending job has a place in the queue to miss.
		"an admitted job's position note is not shown": {
			ex: with(func(ex *Explanation) {
				ex.State, ex.PositionNote = lifecycle.Admitted, "not among the pending workloads Kueue's visibility API lists"
			}),
			notWant: []string{"Position:"},
		},
		"a known position is shown over a note": {
			ex: with(func(ex *Explanation) {
				ex.Position, ex.PositionNote = &Position{InLocalQueue: 0, InClusterQueue: 2}, "ignored"
			}),
			want:    []string{"Position: | 0 in LocalQueue, 2 in ClusterQueue"},
			notWant: []string{"ignored"},
		},
		"flavors assigned at admission, each once": {
			ex: with(func(ex *Explanation) {
				ex.State = lifecycle.Admitted
				ex.Roles = node(gpus("4"), gpus("8"),
					map[corev1.ResourceName]string{corev1.ResourceCPU: "cpu-nodes", corev1.ResourceMemory: "cpu-nodes", fixtures.GPU: "a100"},
					forecast.Candidate{Flavor: "h100", Fit: forecast.Fits})
			}),
			want: []string{"node | 2 | nvidia.com/gpu=4 | nvidia.com/gpu=8 | a100+cpu-nodes"},
		},
		"a candidate short of several resources": {
			ex: with(func(ex *Explanation) {
				ex.Roles = node(gpus("4"), gpus("8"), nil, forecast.Candidate{Flavor: "a100", Fit: forecast.NoFit, Short: fixtures.Requests(t, "nvidia.com/gpu", "2", "cpu", "500m")})
			}),
			want: []string{"node | 2 | nvidia.com/gpu=4 | nvidia.com/gpu=8 | a100 (short 500m cpu, 2 nvidia.com/gpu)"},
		},
		"a role with no flavor to consider": {
			ex:   with(func(ex *Explanation) { ex.Roles = node(gpus("4"), gpus("8"), nil) }),
			want: []string{"node | 2 | nvidia.com/gpu=4 | nvidia.com/gpu=8 | -"},
		},
		"zero requests are left out": {
			ex: with(func(ex *Explanation) {
				ex.Roles = node(fixtures.Requests(t, "cpu", "0", "memory", "1536Mi"), fixtures.Requests(t, "cpu", "0", "memory", "3Gi"), nil)
			}),
			want: []string{"node | 2 | memory=1536Mi | memory=3Gi | -"},
		},
		"a role requesting nothing": {
			ex:   with(func(ex *Explanation) { ex.Roles = node(nil, fixtures.Requests(t, "cpu", "0"), nil) }),
			want: []string{"node | 2 | - | - | -"},
		},
		"quota without a borrowing limit, and with one": {
			ex: with(func(ex *Explanation) {
				ex.Quota = []quotaLine{
					{Flavor: "a100", Resource: fixtures.GPU, Nominal: resource.MustParse("8"), Used: resource.MustParse("2")},
					{Flavor: "a100", Resource: corev1.ResourceMemory, Nominal: resource.MustParse("512Gi"), BorrowingLimit: ptr.To(resource.MustParse("64Gi")), Used: resource.MustParse("100Gi"), CohortLends: resource.MustParse("32Gi")},
				}
			}),
			want: []string{
				"QUOTA OF cq-a | RESOURCE | NOMINAL | BORROWING LIMIT | USED | COHORT LENDS",
				"a100 | nvidia.com/gpu | 8 | - | 2 | 0",
				"a100 | memory | 512Gi | 64Gi | 100Gi | 32Gi",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := tc.ex.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			lines := columns(out.String())
			for _, w := range tc.want {
				if !strings.Contains(strings.Join(lines, "\n")+"\n", w+"\n") {
					t.Errorf("no line %q in:\n%s", w, strings.Join(lines, "\n"))
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(out.String(), nw) {
					t.Errorf("%q in:\n%s", nw, out.String())
				}
			}
			if last := lines[len(lines)-1]; last != "Verdict: | "+tc.ex.Verdict {
				t.Errorf("last line %q, want the verdict", last)
			}
		})
	}
}

type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// A failed write reaches the caller, so kubectl's user sees why the output
// stopped.
func TestWriteTextReturnsTheWriteError(t *testing.T) {
	ex := Explanation{Job: "ml/llama", State: lifecycle.NotQueued, Verdict: "not queued"}
	if err := ex.WriteText(brokenPipe{}); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("error %v, want the writer's", err)
	}
}

func TestCompact(t *testing.T) {
	cases := map[string]struct {
		list corev1.ResourceList
		want string
	}{
		"no requests":          {want: "-"},
		"only zero requests":   {list: fixtures.Requests(t, "cpu", "0", "nvidia.com/gpu", "0"), want: "-"},
		"sorted by name":       {list: fixtures.Requests(t, "nvidia.com/gpu", "8", "memory", "64Gi", "cpu", "1500m"), want: "cpu=1500m memory=64Gi nvidia.com/gpu=8"},
		"zero entries skipped": {list: fixtures.Requests(t, "cpu", "4", "memory", "0"), want: "cpu=4"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := compact(tc.list); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The priority line names every part of the boost that counts, the work
// lost since the last checkpoint and a minimum run time among them.
func TestThePriorityLineNamesTheBoostsParts(t *testing.T) {
	var out strings.Builder
	writePriority(&out, &priorityExplanation{Base: 100, Boost: 1500, Effective: 1600, BoostBy: "trainjob-kueue",
		Parts: &preemptcost.Boost{Total: 1500, Progress: 200, Checkpoint: 800, MinRunTime: 500}})
	for _, want := range []string{"1600 (base 100 + boost 1500", "progress 200", "work lost since the last checkpoint 800", "minimum run time 500"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("%q does not say %q", out.String(), want)
		}
	}
}

// Under a policy with a checkpoint part, explain says what a preemption
// would lose now and when the boost next moves by itself.
func TestExplainSaysTheWorkAPreemptionWouldLose(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	wl := &kueue.Workload{}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-15 * time.Minute))}}
	e := &Explainer{Now: func() time.Time { return now }}
	job := &trainjob.TrainJob{}
	roles := []podsets.Role{{Name: "node", Ancestor: podsets.AncestorTrainer, Replicas: 1, PodsPerReplica: 1}}
	lost := e.lostWork(job, roles, wl, `{"checkpoint":{"points":1000,"stepPercent":10,"intervalSeconds":3600}}`)
	if lost == nil || lost.Seconds != 900 || lost.NextStepSeconds != 180 {
		t.Fatalf("lost %+v, want 900 s, the next step in 180 s", lost)
	}
	if got := e.lostWork(job, roles, wl, `{"progress":{"points":10,"stepPercent":10}}`); got != nil {
		t.Errorf("lost %+v under a policy without a checkpoint part", got)
	}
	var out strings.Builder
	writePriority(&out, &priorityExplanation{Lost: lost})
	if want := "Lost if preempted now:\t15m0s since the last checkpoint; the boost's next step in 3m0s"; !strings.Contains(out.String(), want) {
		t.Errorf("%q does not say %q", out.String(), want)
	}
}
