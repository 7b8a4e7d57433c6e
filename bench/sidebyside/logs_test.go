package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A stopped set-up keeps the end of each component's log, where the reason
// it stopped is.
func TestAStoppedSetUpKeepsTheEndOfEachLog(t *testing.T) {
	from, to := t.TempDir(), filepath.Join(t.TempDir(), "intree-logs")
	long := strings.Repeat("reconciling\n", 100) + "leader election lost\n"
	if err := os.WriteFile(filepath.Join(from, "kueue.log"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(from, "kwok.log"), []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := copyTails(from, to, 32); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"kueue.log": long[len(long)-32:],
		"kwok.log":  "ok\n",
	} {
		got, err := os.ReadFile(filepath.Join(to, name))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("%s kept (-want +got):\n%s", name, diff)
		}
	}
}

// A set-up one of whose components exited counts as unfinished, naming it.
func TestAnExitedComponentStopsTheSetUp(t *testing.T) {
	why := map[string]string{"kueue": "Could not run manager: leader election lost"}
	states := withExited(map[string]int{stateQueued: 89}, []string{"kueue", "kwok"}, func(name string) string { return why[name] })
	if got := unfinishedCount(states); got != 91 {
		t.Errorf("unfinishedCount = %d, want 91", got)
	}
	if got, want := describeStates(states), "1 process exited: kueue (Could not run manager: leader election lost), 1 process exited: kwok, 89 queued, never admitted"; got != want {
		t.Errorf("describeStates = %q, want %q", got, want)
	}
}

// Why a component exited is read from the end of its log: the last error,
// or a panic's message above its goroutine dump.
func TestLastWordsSayWhyAComponentExited(t *testing.T) {
	for name, tc := range map[string]struct {
		log  string
		want string
	}{
		"kueue losing its lease (its own log, 2026-11-26)": {
			log: `{"level":"info","ts":"2026-11-26T06:08:51.77Z","logger":"admission.jobset-webhook","msg":"Validating update"}
E1126 06:09:00.620420   20839 leaderelection.go:461] "Error retrieving lease lock" err="client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline" lock="kueue-system/c1f6bfd2.kueue.x-k8s.io"
I1126 06:09:02.621025   20839 leaderelection.go:304] "Failed to renew lease" lock="kueue-system/c1f6bfd2.kueue.x-k8s.io" err="context deadline exceeded"
{"level":"info","ts":"2026-11-26T06:09:02.89Z","logger":"trainjob","msg":"Waited before sending request","delay":10.933635473}
{"level":"error","ts":"2026-11-26T06:09:03.27Z","logger":"setup","caller":"cmd/main.go:449","msg":"Could not run manager","error":"leader election lost","stacktrace":"main.main"}
`,
			want: "Could not run manager: leader election lost",
		},
		"a klog error last": {
			log:  "I1126 06:00:00.000000       1 server.go:1] serving\nF1126 06:00:01.000000       1 server.go:2] etcd unreachable\n",
			want: "etcd unreachable",
		},
		"a panic above its goroutines": {
			log:  "{\"level\":\"error\",\"msg\":\"Reconciler error\",\"error\":\"conflict\"}\npanic: runtime error: invalid memory address\n\ngoroutine 1 [running]:\nmain.main()\n",
			want: "panic: runtime error: invalid memory address",
		},
		"nothing said": {
			log:  "{\"level\":\"info\",\"msg\":\"starting\"}\n",
			want: "",
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.log")
			if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := lastWords(path); got != tc.want {
				t.Errorf("lastWords = %q, want %q", got, tc.want)
			}
		})
	}
}
