package integration

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

func TestDispatchedJobName(t *testing.T) {
	wl := func(name string, origin bool) *kueue.Workload {
		w := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if origin {
			w.Labels = map[string]string{kueue.MultiKueueOriginLabel: "mk"}
		}
		return w
	}
	for name, tc := range map[string]struct {
		wl   *kueue.Workload
		want string
		ok   bool
	}{
		"dispatched here":                  {wl: wl("trainjob-clash-1a2b3", true), want: "clash", ok: true},
		"a job name with dashes":           {wl: wl("trainjob-my-long-job-1a2b3", true), want: "my-long-job", ok: true},
		"our own, not dispatched":          {wl: wl("trainjob-clash-1a2b3", false)},
		"another kind's":                   {wl: wl("jobset-clash-1a2b3", true)},
		"a name the framework never makes": {wl: wl("trainjob-", true)},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := dispatchedJobName(tc.wl)
			if got != tc.want || ok != tc.ok {
				t.Errorf("dispatchedJobName = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// The hold is said in full: the job in the way, why it is not the copy,
// the Workload, and what to do.
func TestNameTakenSaysWhatIsInTheWayAndTheFix(t *testing.T) {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "trainjob-clash-1a2b3"}}
	for _, want := range []string{"TrainJob ns/clash", "MultiKueue did not create it", "trainjob-clash-1a2b3", "gives back its quota", "Rename or delete"} {
		if got := nameTaken(wl, theirs()); !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	if got := nameTaken(wl, copyFor("trainjob-clash-zzzzz")); !strings.Contains(got, "made for Workload trainjob-clash-zzzzz") {
		t.Errorf("%q does not name the Workload the job in the way was made for", got)
	}
}
