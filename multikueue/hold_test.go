package multikueue

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

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
