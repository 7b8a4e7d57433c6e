package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
)

func TestMetricsCountWhatHappened(t *testing.T) {
	m := NewMetrics()
	m.Injected("")
	m.Injected("NodeSelectorConflict")
	m.Restored("")
	m.PodSetError("RuntimeNotFound")
	m.Started(time.Now().Add(-time.Second))
	m.Gang(gang.ActionRetried)
	m.BoostWritten("set")
	m.WebhookRefused("create", "spec.trainer")
	for name, c := range map[string]struct {
		got, want float64
	}{
		"injection done":          {testutil.ToFloat64(m.injections.WithLabelValues(resultDone, "")), 1},
		"injection conflict":      {testutil.ToFloat64(m.injections.WithLabelValues(resultFailed, "NodeSelectorConflict")), 1},
		"restore done":            {testutil.ToFloat64(m.restores.WithLabelValues(resultDone, "")), 1},
		"podset runtime missing":  {testutil.ToFloat64(m.podSetErrors.WithLabelValues("RuntimeNotFound")), 1},
		"admission to start seen": {float64(testutil.CollectAndCount(m.admissionToStart)), 1},
		"gang retried":            {testutil.ToFloat64(m.gangs.WithLabelValues(gang.ActionRetried)), 1},
		"boost set":               {testutil.ToFloat64(m.boosts.WithLabelValues("set")), 1},
		"a create refused":        {testutil.ToFloat64(m.refusals.WithLabelValues("create", "spec.trainer")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", name, c.got, c.want)
		}
	}
	// A manager without metrics (tests) takes nil.
	var none *Metrics
	none.Injected("")
}
