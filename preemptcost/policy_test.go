package preemptcost

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/names"
)

func TestParse(t *testing.T) {
	for name, tc := range map[string]struct {
		value string
		want  Policy
		field string // the field a refusal names; "-" for none in particular
	}{
		"the example": {value: Example, want: Policy{Progress: &ProgressPart{Points: 1000, StepPercent: 10},
			Preemptions: &PreemptionsPart{Points: 500, Every: 1, MaxPoints: 2000}}},
		"empty: no part":                   {value: `{}`, want: Policy{}},
		"take over":                        {value: `{"timeLeft":{"points":7,"underSeconds":600},"takeOver":true}`, want: Policy{TimeLeft: &TimeLeftPart{Points: 7, UnderSeconds: 600}, TakeOver: true}},
		"not JSON":                         {value: `progress=10`, field: "-"},
		"two values":                       {value: `{} {}`, field: "-"},
		"a misspelt part":                  {value: `{"progres":{"points":1,"stepPercent":10}}`, field: "-"},
		"negative progress points":         {value: `{"progress":{"points":-1,"stepPercent":10}}`, field: "progress.points"},
		"a step of 0":                      {value: `{"progress":{"points":1,"stepPercent":0}}`, field: "progress.stepPercent"},
		"a step over 100":                  {value: `{"progress":{"points":1,"stepPercent":101}}`, field: "progress.stepPercent"},
		"a negative rate":                  {value: `{"progress":{"points":1,"stepPercent":10,"maxPercentPerHour":-1}}`, field: "progress.maxPercentPerHour"},
		"every 0 preemptions":              {value: `{"preemptions":{"points":1,"every":0,"maxPoints":1}}`, field: "preemptions.every"},
		"no cap":                           {value: `{"preemptions":{"points":1,"every":1}}`, field: "preemptions.maxPoints"},
		"negative cap":                     {value: `{"preemptions":{"points":1,"every":1,"maxPoints":-5}}`, field: "preemptions.maxPoints"},
		"no threshold":                     {value: `{"timeLeft":{"points":1}}`, field: "timeLeft.underSeconds"},
		"a minimum run time":               {value: `{"minRunTime":{"points":100,"seconds":600}}`, want: Policy{MinRunTime: &MinRunTimePart{Points: 100, Seconds: 600}}},
		"a minimum run time of 0 s":        {value: `{"minRunTime":{"points":100}}`, field: "minRunTime.seconds"},
		"negative minimum run time points": {value: `{"minRunTime":{"points":-1,"seconds":60}}`, field: "minRunTime.points"},
		"beyond an int32":                  {value: `{"progress":{"points":3000000000,"stepPercent":10}}`, field: "-"},
		"overflowing int32 when summed":    {value: `{"progress":{"points":2000000000,"stepPercent":10},"preemptions":{"points":1,"every":1,"maxPoints":2000000000}}`, field: "-"},
		"int32 exactly when summed": {value: `{"progress":{"points":2147483000,"stepPercent":10},"timeLeft":{"points":647,"underSeconds":1}}`,
			want: Policy{Progress: &ProgressPart{Points: 2147483000, StepPercent: 10}, TimeLeft: &TimeLeftPart{Points: 647, UnderSeconds: 1}}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.value)
			if tc.field != "" {
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %v, want a policy error", err)
				}
				if tc.field != "-" && pe.Field != tc.field {
					t.Errorf("refusal names %q, want %q: %v", pe.Field, tc.field, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The largest boost a valid policy gives fits an int32, however the parts
// add up.
func TestTheLargestBoostFitsAnInt32(t *testing.T) {
	// Every part at its maximum: 2147482900 + 300 + 247 + 100 + 100.
	const most = `{"progress":{"points":2147482900,"stepPercent":1},"preemptions":{"points":100,"every":1,"maxPoints":300},` +
		`"timeLeft":{"points":247,"underSeconds":10},"minRunTime":{"points":100,"seconds":86400},"checkpoint":{"points":%d,"stepPercent":10,"intervalSeconds":3600}}`
	p, err := Parse(fmt.Sprintf(most, 100))
	if err != nil {
		t.Fatal(err)
	}
	run, ago := int64(7200), int64(86400)
	b := Of(p, Signals{Training: true, ProgressPercent: pct(100), RemainingSeconds: pct(1), Preemptions: math.MaxInt32, RunSeconds: &run, CheckpointAgo: &ago})
	if b.Total != math.MaxInt32 || b.MinRunTime != 100 {
		t.Errorf("total %d (%+v), want %d", b.Total, b, int32(math.MaxInt32))
	}
	if _, err := Parse(fmt.Sprintf(most, 101)); err == nil || !strings.Contains(err.Error(), "int32") {
		t.Errorf("one point more: %v, want a refusal naming int32", err)
	}
}

// A refusal that names no field reads as its message alone.
func TestAnErrorWithoutAFieldHasNoEmptyField(t *testing.T) {
	_, err := Parse(`progress=10`)
	if err == nil || strings.HasPrefix(err.Error(), ":") || strings.Contains(err.Error(), ": :") {
		t.Errorf("error %q", err)
	}
}

func TestSteps(t *testing.T) {
	for name, tc := range map[string]struct {
		p    Policy
		want int32
	}{
		"none":                               {want: 0},
		"progress every 10%":                 {p: Policy{Progress: &ProgressPart{Points: 100, StepPercent: 10}}, want: 10},
		"progress every 30%":                 {p: Policy{Progress: &ProgressPart{Points: 100, StepPercent: 30}}, want: 3},
		"progress of 0 points":               {p: Policy{Progress: &ProgressPart{Points: 0, StepPercent: 10}}, want: 0},
		"preemptions, 50 up to 120":          {p: Policy{Preemptions: &PreemptionsPart{Points: 50, Every: 2, MaxPoints: 120}}, want: 3},
		"time left":                          {p: Policy{TimeLeft: &TimeLeftPart{Points: 5, UnderSeconds: 60}}, want: 1},
		"minimum run time":                   {p: Policy{MinRunTime: &MinRunTimePart{Points: 5, Seconds: 60}}, want: 2},
		"checkpoint every 10%, per interval": {p: Policy{Checkpoint: &CheckpointPart{Points: 5, StepPercent: 10, IntervalSeconds: 3600}}, want: 11},
		"all":                                {p: Policy{Progress: &ProgressPart{Points: 100, StepPercent: 25}, Preemptions: &PreemptionsPart{Points: 10, Every: 1, MaxPoints: 30}, TimeLeft: &TimeLeftPart{Points: 5, UnderSeconds: 60}, MinRunTime: &MinRunTimePart{Points: 5, Seconds: 60}}, want: 10},
	} {
		t.Run(name, func(t *testing.T) {
			if got := tc.p.Steps(); got != tc.want {
				t.Errorf("Steps = %d, want %d", got, tc.want)
			}
		})
	}
}

// pct is a reported percentage (or seconds), as Trainer's status has them.
func pct(v int32) *int32 { return &v }

// No policy the webhook accepts lets a pending job outrank a running job
// of its own class: with every part at its maximum and every signal at
// its most, a job that is not running (never admitted, or evicted and
// stopping) is boosted 0, and the least boost of a running peer is 0.
func TestNoPolicyGivesAPendingJobThePowerToPreemptItsClass(t *testing.T) {
	const most = `{"progress":{"points":2147482900,"stepPercent":1},"preemptions":{"points":100,"every":1,"maxPoints":300},` +
		`"timeLeft":{"points":247,"underSeconds":10},"minRunTime":{"points":100,"seconds":86400},"checkpoint":{"points":100,"stepPercent":10,"intervalSeconds":3600}}`
	p, err := Parse(most)
	if err != nil {
		t.Fatal(err)
	}
	ago := int64(86400)
	pending := Signals{Training: true, ProgressPercent: pct(100), RemainingSeconds: pct(1), Preemptions: math.MaxInt32, CheckpointAgo: &ago}
	if b := Of(p, pending); b.Total != 0 {
		t.Errorf("a pending job boosted %d (%+v): it would preempt running jobs of its class", b.Total, b)
	}
	if next := NextChange(p, pending); next != 0 {
		t.Errorf("a pending job woken in %d s: nothing of its boost changes until it runs", next)
	}
}

func TestPolicyOfReadsTheClusterQueuesAnnotation(t *testing.T) {
	cq := func(annotations map[string]string) *kueue.ClusterQueue {
		return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: annotations}}
	}
	if _, set, err := PolicyOf(cq(nil)); set || err != nil {
		t.Errorf("no annotation: set %v, err %v", set, err)
	}
	if p, set, err := PolicyOf(cq(map[string]string{names.PreemptionCostAnnotation: `{"progress":{"points":1000,"stepPercent":10}}`})); !set || err != nil || p.Progress == nil {
		t.Errorf("a policy: %+v, set %v, err %v", p, set, err)
	}
	if _, set, err := PolicyOf(cq(map[string]string{names.PreemptionCostAnnotation: `{"progres":{}}`})); !set || err == nil {
		t.Errorf("a misspelt policy: set %v, err %v; want set, refused", set, err)
	}
}
