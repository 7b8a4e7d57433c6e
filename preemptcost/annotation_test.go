package preemptcost

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// The boost is written, read back, recognised as ours and removed through
// this file alone; a boost someone else set is read, and is not ours.
func TestTheBoostOnAWorkloadRoundTrips(t *testing.T) {
	wl := &kueue.Workload{}
	b := Boost{Total: 900, Progress: 800, Checkpoint: 100}
	SetOn(wl, &b)
	if v, set := BoostOn(wl); !set || v != "900" || BoostValue(wl) != 900 {
		t.Errorf("boost %q (set %v), value %d; want 900", v, set, BoostValue(wl))
	}
	if got, ours := OursOn(wl); !ours || got != b || !Marked(wl) || !Written(wl, b) {
		t.Errorf("ours %v %+v, marked %v, written %v", ours, got, Marked(wl), Written(wl, b))
	}
	if Written(wl, Boost{Total: 900, Progress: 900}) {
		t.Error("other parts of the same total read as written")
	}
	SetOn(wl, nil)
	if _, set := BoostOn(wl); set || Marked(wl) || len(wl.Annotations) != 0 {
		t.Errorf("after removal: %v", wl.Annotations)
	}
	foreign := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kueue.x-k8s.io/priority-boost": "7"}}}
	if _, ours := OursOn(foreign); ours || Marked(foreign) || BoostValue(foreign) != 7 {
		t.Errorf("someone else's boost: ours %v, marked %v, value %d", ours, Marked(foreign), BoostValue(foreign))
	}
	// An older mark, written before the minimum run time and checkpoint
	// parts existed, still reads as the same boost (no rewrite on upgrade).
	old := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		"kueue.x-k8s.io/priority-boost":     "900",
		"trainjob-kueue.dev/priority-boost": `{"total":900,"progress":900,"preemptions":0,"timeLeft":0}`}}}
	if !Written(old, Boost{Total: 900, Progress: 900}) {
		t.Error("a mark of the former format reads as another boost")
	}
}
