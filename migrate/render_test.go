package migrate

import (
	"strings"
	"testing"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
)

func TestWriteSaysWhetherTheSwitchMayGoAhead(t *testing.T) {
	var out strings.Builder
	ok := []Verdict{{Namespace: "a", Name: "j", State: lifecycle.Running, Decision: Adopted, Reason: "same"}}
	if err := Write(&out, ok); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "No running TrainJob would be stopped by the switch (1 checked)") || Stops(ok) != 0 {
		t.Errorf("got %q", out.String())
	}
	out.Reset()
	bad := append(ok, Verdict{Namespace: "a", Name: "k", State: lifecycle.Running, Decision: Stopped, Reason: "counts"})
	if err := Write(&out, bad); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 running TrainJob(s) would be stopped") || Stops(bad) != 1 {
		t.Errorf("got %q", out.String())
	}
}
