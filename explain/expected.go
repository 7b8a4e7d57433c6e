package explain

import (
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
)

// Expected is s as said at now.
func Expected(s Start, now time.Time) *lifecycle.ExpectedStart {
	if !s.Known() {
		return &lifecycle.ExpectedStart{Unknown: s.Unknown}
	}
	in := int64(s.At.Sub(now).Round(time.Second) / time.Second)
	out := &lifecycle.ExpectedStart{At: &s.At, InSeconds: &in}
	for _, r := range s.After {
		out.After = append(out.After, lifecycle.ExpectedEnd{Job: r.Job, LeftSeconds: int64(r.End.Sub(now).Round(time.Second) / time.Second), From: r.From})
	}
	return out
}
