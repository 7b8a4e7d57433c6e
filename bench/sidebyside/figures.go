package main

import (
	"math"
	"slices"
	"time"
)

func percentiles(samples []time.Duration) *Percentiles {
	if len(samples) == 0 {
		return nil
	}
	slices.Sort(samples)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(samples)))) - 1
		i = max(0, min(i, len(samples)-1))
		return float64(samples[i].Microseconds()) / 1000
	}
	return &Percentiles{P50: at(0.50), P90: at(0.90), P99: at(0.99)}
}

// spans collects one latency over every job of the results: to - from,
// where both were seen.
func spans(rs []*result, from, to func(*times) time.Time) []time.Duration {
	var out []time.Duration
	for _, r := range rs {
		for _, t := range r.jobs {
			a, b := from(t), to(t)
			if a.IsZero() || b.IsZero() {
				continue
			}
			out = append(out, max(b.Sub(a), 0))
		}
	}
	return out
}

// throughput is jobs admitted per second, the first create to the last
// admission; in a harness-scale run (r.hold), quota reservations.
func throughput(r *result) float64 {
	n, d := span(r)
	if n == 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// span is how many of r's jobs were admitted (reserved, r.hold) and the
// time from the first create to the last of them.
func span(r *result) (int, time.Duration) {
	var firstCreated, last time.Time
	n := 0
	for _, t := range r.jobs {
		at := t.admitted
		if r.hold {
			at = t.reserved
		}
		if at.IsZero() {
			continue
		}
		n++
		if firstCreated.IsZero() || (!t.created.IsZero() && t.created.Before(firstCreated)) {
			firstCreated = t.created
		}
		if at.After(last) {
			last = at
		}
	}
	return n, last.Sub(firstCreated)
}

func ref[T any](v T) *T { return &v }

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
