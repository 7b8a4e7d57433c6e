package deployed_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Messages the manager logs at a mode change (cmd/trainjob-kueue).
const (
	drainingLog = "Draining before a restart in the new mode"
	standbyLog  = "Standing by"
	servingLog  = "Serving TrainJobs"
)

// The Kueue Configuration the replicas read (its ConfigMap, mounted in
// each) turns Kueue's built-in TrainJob integration on, then off again, as
// an admin's switch does: each replica sees the edit at a moment of its
// own (its volume's tick) and restarts in process in the new mode —
// standing by, then taking TrainJobs over — one at a time, draining as
// after a SIGTERM (its readiness fails first, its webhook keeps answering).
// A server-side dry-run create every 100 ms through both changes: no call
// fails, no replica exits, and no two replicas are ever restarting at once.
func TestModeChangesRestartOneReplicaAtATimeAndNoWebhookCallFails(t *testing.T) {
	pods := twoReady(t)
	ns, lq := setUp(t)
	probe := startWebhookProbe(ns, lq)
	setBuiltInTrainJob(t, true)
	eachLogged(t, pods, standbyLog, 1)
	setBuiltInTrainJob(t, false)
	// Each run logs that it serves, standing by too: the first run, the
	// standby's, and the one taking TrainJobs over again.
	eachLogged(t, pods, servingLog, 3)
	probe.Stop(t)
	for _, p := range pods {
		if !p.Running() {
			t.Errorf("%s exited during the mode changes: a mode change is a restart in process", p.name)
		}
	}
	restartsNeverOverlap(t, pods)
}

// setBuiltInTrainJob edits Kueue's Configuration in the shipped ConfigMap
// as the runbook does: the built-in TrainJob framework listed (and the
// MultiKueue adapter Kueue would refuse beside it taken out) or not.
func setBuiltInTrainJob(t *testing.T, on bool) {
	t.Helper()
	const framework, external = "trainer.kubeflow.org/trainjob", "TrainJob.v1alpha1.trainer.kubeflow.org"
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: dep.namespace, Name: "trainjob-kueue-kueue-config"}
	if err := k8s.Get(ctx, key, cm); err != nil {
		t.Fatal(err)
	}
	const file = "controller_manager_config.yaml"
	cfg := map[string]any{}
	if err := yaml.Unmarshal([]byte(cm.Data[file]), &cfg); err != nil {
		t.Fatal(err)
	}
	integrations, _ := cfg["integrations"].(map[string]any)
	frameworks, _ := integrations["frameworks"].([]any)
	frameworks = slices.DeleteFunc(frameworks, func(f any) bool { return f == framework })
	if on {
		frameworks = append(frameworks, framework)
		if mk, ok := cfg["multiKueue"].(map[string]any); ok {
			ext, _ := mk["externalFrameworks"].([]any)
			mk["externalFrameworks"] = slices.DeleteFunc(ext, func(f any) bool { m, _ := f.(map[string]any); return m["name"] == external })
		}
	}
	integrations["frameworks"] = frameworks
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[file] = string(data)
	if err := k8s.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
}

// eachLogged waits until every replica has logged msg at least n times.
func eachLogged(t *testing.T, pods []*pod, msg string, n int) {
	t.Helper()
	eventually(t, 3*time.Minute, fmt.Sprintf("every replica logged %q %d times", msg, n), func() error {
		for _, p := range pods {
			lines, err := logLines(p)
			if err != nil {
				return err
			}
			if got := len(slices.DeleteFunc(lines, func(l logLine) bool { return !strings.HasPrefix(l.Msg, msg) })); got < n {
				return fmt.Errorf("%s logged it %d times", p.name, got)
			}
		}
		return nil
	})
}

// restartsNeverOverlap: a replica's restart runs from its drain to its
// next start (standing by or serving); no two replicas' restarts overlap.
func restartsNeverOverlap(t *testing.T, pods []*pod) {
	t.Helper()
	type window struct {
		pod        string
		from, till float64
	}
	var windows []window
	for _, p := range pods {
		lines, err := logLines(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range lines {
			if !strings.HasPrefix(l.Msg, drainingLog) {
				continue
			}
			w := window{pod: p.name, from: l.TS, till: -1}
			for _, next := range lines[i+1:] {
				if strings.HasPrefix(next.Msg, standbyLog) || strings.HasPrefix(next.Msg, servingLog) {
					w.till = next.TS
					break
				}
			}
			if w.till < 0 {
				t.Errorf("%s drained at %.3f and never started again", p.name, w.from)
				continue
			}
			windows = append(windows, w)
		}
	}
	if len(windows) < 2*len(pods) {
		t.Errorf("%d restarts seen, want %d (each replica, both ways): %+v", len(windows), 2*len(pods), windows)
	}
	for i, a := range windows {
		for _, b := range windows[i+1:] {
			if a.pod != b.pod && a.from < b.till && b.from < a.till {
				t.Errorf("%s restarted from %.3f to %.3f while %s restarted from %.3f to %.3f: both at once", a.pod, a.from, a.till, b.pod, b.from, b.till)
			}
		}
	}
}

// logLine is a line of the manager's JSON log: its time (seconds since
// the epoch) and message.
type logLine struct {
	TS  float64
	Msg string
}

// parseLogLine reads a line of zap's JSON: ts as an RFC 3339 time (the
// manager's encoder) or epoch seconds (zap's default).
func parseLogLine(data []byte) (logLine, bool) {
	var raw struct {
		TS  json.RawMessage `json:"ts"`
		Msg string          `json:"msg"`
	}
	if json.Unmarshal(data, &raw) != nil || raw.Msg == "" {
		return logLine{}, false
	}
	var s string
	if json.Unmarshal(raw.TS, &s) == nil {
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return logLine{}, false
		}
		return logLine{TS: float64(at.UnixNano()) / 1e9, Msg: raw.Msg}, true
	}
	var f float64
	if json.Unmarshal(raw.TS, &f) != nil {
		return logLine{}, false
	}
	return logLine{TS: f, Msg: raw.Msg}, true
}

func logLines(p *pod) ([]logLine, error) {
	f, err := os.Open(p.logFile())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []logLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l, ok := parseLogLine(sc.Bytes()); ok {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}
