package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// A set-up that stops finishing jobs is reported, not waited on: at
// N = 2,000 the in-tree set-up stopped with completed TrainJobs' Workloads
// still admitted, holding the quota the rest of the queue waited for (its
// Kueue process had exited), and the bench sat out its 90-minute timeout to
// report nothing. Now it stops once no job finished for -stall, or at once
// when a component exited, says where the unfinished jobs are, and keeps
// the figures of what did run.

// progress remembers when the count of finished jobs last moved.
type progress struct {
	finished int
	at       time.Time
}

// stalled records finished at now and tells whether it has not moved for
// stall.
func (p *progress) stalled(now time.Time, finished int, stall time.Duration) bool {
	if p.at.IsZero() || finished != p.finished {
		p.finished, p.at = finished, now
		return false
	}
	return stall > 0 && now.Sub(p.at) >= stall
}

// Where a job a wedged set-up left can be, from what the bench saw of it.
const (
	stateNoWorkload   = "no Workload"
	stateQueued       = "queued, never admitted"
	stateNotStarted   = "admitted, never unsuspended"
	stateRunning      = "unsuspended, not finished"
	stateHoldingQuota = "finished, Workload still admitted"
)

// unfinishedStates counts the jobs by where they stand. Finished jobs whose
// Workload is still admitted are counted too: they hold quota no job
// needs.
func unfinishedStates(jobs map[string]*times) map[string]int {
	out := map[string]int{}
	for _, t := range jobs {
		switch {
		case !t.finished.IsZero():
			if t.holding {
				out[stateHoldingQuota]++
			}
		case t.workload.IsZero():
			out[stateNoWorkload]++
		case t.admitted.IsZero():
			out[stateQueued]++
		case t.unsuspended.IsZero():
			out[stateNotStarted]++
		default:
			out[stateRunning]++
		}
	}
	return out
}

// unfinishedCount is how many jobs never finished, of those counted.
func unfinishedCount(states map[string]int) int {
	n := 0
	for k, v := range states {
		if k != stateHoldingQuota {
			n += v
		}
	}
	return n
}

func describeStates(states map[string]int) string {
	keys := slices.Sorted(maps.Keys(states))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", states[k], k))
	}
	return strings.Join(parts, ", ")
}

// withExited adds to states one entry per component that exited: a set-up
// whose Kueue or controller died stopped for that reason, not its
// integration's.
func withExited(states map[string]int, components []string, why func(component string) string) map[string]int {
	for _, name := range components {
		key := "process exited: " + name
		if words := why(name); words != "" {
			key += " (" + words + ")"
		}
		states[key] = 1
	}
	return states
}
