package overview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
)

func TestWriteTableWideJSONAndYAML(t *testing.T) {
	rows := []Row{
		{Namespace: "ns", Name: "a", Queue: "lq", ClusterQueue: "cq", State: lifecycle.Queued, Position: ptr.To[int32](0), Pods: 2, GPUs: 16, Waited: 90 * time.Second, WaitedSeconds: 90, Priority: ptr.To[int64](820),
			ExpectedStart: &forecast.ExpectedStart{Unknown: "it waits for ml/x, whose end can't be told"}},
		{Namespace: "ns", Name: "b", State: lifecycle.NotQueued, Why: "no kueue.x-k8s.io/queue-name label"},
	}
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	var b bytes.Buffer
	if err := Write(&b, rows, "", true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NAMESPACE TRAINJOB QUEUE STATE POSITION FLAVORS PODS GPUS WAITED PREEMPTED", "ns a lq Queued 0 - 0/2 16 1m30s 0", "ns b - NotQueued - - 0/0 0 - 0"} {
		if !strings.Contains(words(b.String()), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := Write(&b, rows, "wide", false); err != nil {
		t.Fatal(err)
	}
	if got := words(b.String()); strings.Contains(got, "NAMESPACE") || !strings.Contains(got, "CLUSTERQUEUE PRIORITY EXPECTED START WHY") || !strings.Contains(got, "cq 820 unknown -") || !strings.Contains(got, "no kueue.x-k8s.io/queue-name label") {
		t.Errorf("wide table:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, rows, "json", false); err != nil {
		t.Fatal(err)
	}
	var got struct{ Items []Row }
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || len(got.Items) != 2 || got.Items[0].WaitedSeconds != 90 || got.Items[0].ExpectedStart == nil || got.Items[0].ExpectedStart.Unknown == "" {
		t.Errorf("json %v: %s", err, b.String())
	}
	b.Reset()
	if err := Write(&b, rows, "yaml", false); err != nil || !strings.Contains(b.String(), "state: Queued") {
		t.Errorf("yaml %v: %s", err, b.String())
	}
	if err := Write(&b, rows, "xml", false); err == nil || !strings.Contains(err.Error(), "use wide, json or yaml") {
		t.Errorf("-o xml: %v, want a refusal naming the choices", err)
	}
}

// A job admitted the second it was created waited 0s, not an unknown.
func TestAJobAdmittedAtOnceWaitedZeroSeconds(t *testing.T) {
	if got := waited(Row{State: lifecycle.Running}); got != "0s" {
		t.Errorf("waited = %q, want 0s", got)
	}
	if got := waited(Row{State: lifecycle.NotQueued, Waited: time.Minute}); got != "-" {
		t.Errorf("a job not queued waited %q, want -", got)
	}
}
