package forecast

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

func TestExpectedStartIsSaidAsAPersonWould(t *testing.T) {
	at := time.Date(2026, 12, 4, 14, 5, 0, 0, time.Local)
	for name, tc := range map[string]struct {
		e              *ExpectedStart
		sentence, cell string
	}{
		"in twelve minutes, after two jobs": {e: &ExpectedStart{At: &at, InSeconds: ptr.To[int64](12*60 + 20), After: []ExpectedEnd{
			{Job: "ml/sweep-2", LeftSeconds: 4 * 60, From: "from its runtime's history"}, {Job: "ml/llm-1", LeftSeconds: 12*60 + 20, From: "reported"}}},
			sentence: "at 14:05, in about 12m, once ml/sweep-2 (4m left, from its runtime's history) and ml/llm-1 (12m left, reported) finish", cell: "14:05 (12m)"},
		"in two hours": {e: &ExpectedStart{At: &at, InSeconds: ptr.To[int64](2 * 3600)}, sentence: "at 14:05, in about 2h", cell: "14:05 (2h)"},
		"in 40 seconds, after a job with 1m30s left": {e: &ExpectedStart{At: &at, InSeconds: ptr.To[int64](42), After: []ExpectedEnd{{Job: "ml/a", LeftSeconds: 88, From: "reported"}}},
			sentence: "at 14:05, in about 40s, once ml/a (1m30s left, reported) finishes", cell: "14:05 (40s)"},
		"now":          {e: &ExpectedStart{At: &at, InSeconds: ptr.To[int64](0)}, sentence: "now, once Kueue admits it", cell: "now"},
		"unknown":      {e: &ExpectedStart{Unknown: "it waits for ml/x"}, sentence: "unknown: it waits for ml/x", cell: "unknown"},
		"not computed": {cell: "-"},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.e != nil {
				if got := tc.e.Sentence(); got != tc.sentence {
					t.Errorf("Sentence: %q, want %q", got, tc.sentence)
				}
			}
			if got := tc.e.Short(); got != tc.cell {
				t.Errorf("Short: %q, want %q", got, tc.cell)
			}
		})
	}
}
