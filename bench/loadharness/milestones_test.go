package loadharness

import (
	"testing"
	"time"
)

func TestAMilestoneKeepsItsFirstTime(t *testing.T) {
	type times struct{ seen time.Time }
	m := map[string]*times{}
	t0 := time.Unix(100, 0)
	First(&Entry(m, "a").seen, t0)
	First(&Entry(m, "a").seen, t0.Add(time.Second))
	if got := m["a"].seen; !got.Equal(t0) {
		t.Errorf("seen = %v, want the first %v", got, t0)
	}
	if len(m) != 1 {
		t.Errorf("entries = %d, want 1", len(m))
	}
	if got := Sum(map[string]int{"get trainjobs": 2, "patch workloads": 3}); got != 5 {
		t.Errorf("Sum = %d, want 5", got)
	}
}
