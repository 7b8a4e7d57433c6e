package forecast

import (
	"fmt"
	"strings"
	"time"
)

// ExpectedStart is when a waiting job is expected to start, as explain
// and list say it (Forecast plays its ClusterQueue forward).
type ExpectedStart struct {
	// At is the time; nil when it can't be told (Unknown says why).
	At *time.Time `json:"at,omitempty"`
	// InSeconds is At less the time it was computed at.
	InSeconds *int64 `json:"inSeconds,omitempty"`
	// After are the jobs whose end it waits for, the last to end last.
	After   []ExpectedEnd `json:"after,omitempty"`
	Unknown string        `json:"unknown,omitempty"`
}

// ExpectedEnd is a job the start waits for: how long it has left, and how
// that is known.
type ExpectedEnd struct {
	Job         string `json:"trainJob"`
	LeftSeconds int64  `json:"leftSeconds"`
	From        string `json:"from"`
}

// Sentence says it: "at 14:05, in about 12m, once llm-1 (10m left,
// reported) and sweep-2 (4m left, from its runtime's history) finish".
func (e *ExpectedStart) Sentence() string {
	if e.At == nil {
		return "unknown: " + e.Unknown
	}
	in := time.Duration(*e.InSeconds) * time.Second
	var b strings.Builder
	if in <= 0 {
		b.WriteString("now, once Kueue admits it")
	} else {
		fmt.Fprintf(&b, "at %s, in about %s", e.At.Local().Format("15:04"), roundedDuration(in))
	}
	if len(e.After) > 0 {
		var parts []string
		for _, a := range e.After {
			parts = append(parts, fmt.Sprintf("%s (%s left, %s)", a.Job, roundedDuration(time.Duration(a.LeftSeconds)*time.Second), a.From))
		}
		verb := " finish"
		if len(parts) == 1 {
			verb = " finishes"
		}
		b.WriteString(", once " + joinAnd(parts) + verb)
	}
	return b.String()
}

// Short says it in a table's cell: "14:05 (12m)", "now", "unknown".
func (e *ExpectedStart) Short() string {
	switch {
	case e == nil:
		return "-"
	case e.At == nil:
		return "unknown"
	case *e.InSeconds <= 0:
		return "now"
	}
	return fmt.Sprintf("%s (%s)", e.At.Local().Format("15:04"), roundedDuration(time.Duration(*e.InSeconds)*time.Second))
}

// roundedDuration rounds d as a person would say it: to the minute past
// ten minutes, to ten seconds below.
func roundedDuration(d time.Duration) string {
	if d >= 10*time.Minute {
		d = d.Round(time.Minute)
	} else {
		d = d.Round(10 * time.Second)
	}
	// Go says 2m0s and 1h0m0s; a person says 2m and 1h, and 40s and
	// 1m30s as they are.
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Expected is s as said at now.
func Expected(s Start, now time.Time) *ExpectedStart {
	if !s.Known() {
		return &ExpectedStart{Unknown: s.Unknown}
	}
	in := int64(s.At.Sub(now).Round(time.Second) / time.Second)
	out := &ExpectedStart{At: &s.At, InSeconds: &in}
	for _, r := range s.After {
		out.After = append(out.After, ExpectedEnd{Job: r.Job, LeftSeconds: int64(r.End.Sub(now).Round(time.Second) / time.Second), From: r.From})
	}
	return out
}
