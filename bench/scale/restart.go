package main

import (
	"slices"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// promptedWrites sorts the writes our manager made in a window: between its
// restart and its first idle moment, or in the minute after a runtime edit.
// Neither a cold start nor an edit of a runtime its queued jobs were
// snapshotted from may make a write when nothing else changed, but the
// cluster does not stand still meanwhile: Trainer keeps writing the status
// of running jobs, Kueue that of Workloads, and a write of ours that follows
// one of those, to the same job, answers a change. Only the rest are the
// window's own.
type promptedWrites struct {
	// Answering: writes that followed, in the window, another
	// component's write to the same job (its TrainJob, its JobSet or its
	// Workload).
	Answering int `json:"answering"`
	// Prompts counts the answering writes by the last write before each:
	// "verb resource[/subresource] by user".
	Prompts map[string]int `json:"prompts,omitempty"`
	// Unprompted: writes nothing changed before. The goal is none.
	Unprompted int `json:"unprompted"`
	// Examples of unprompted writes (at most 10), to start a diagnosis.
	Examples []string `json:"unprompted_examples,omitempty"`
}

// classifyWrites reads the successful requests of every user in the window.
// jobOfWorkload names the TrainJob a
// Workload belongs to ("" for none of the load's).
func classifyWrites(events []localcluster.AuditEvent, ours string, jobOfWorkload func(string) string) promptedWrites {
	events = slices.Clone(events)
	slices.SortStableFunc(events, func(a, b localcluster.AuditEvent) int { return a.Received.Compare(b.Received) })
	out := promptedWrites{Prompts: map[string]int{}}
	lastOther := map[string]string{}
	for i := range events {
		e := &events[i]
		if !e.Succeeded() || !isWrite(e) {
			continue
		}
		job := jobOfEvent(e, jobOfWorkload)
		what := describe(e)
		if e.User.Username != ours {
			if job != "" {
				lastOther[job] = what + " by " + e.User.Username
			}
			continue
		}
		if prompt, ok := lastOther[job]; ok && job != "" {
			out.Answering++
			out.Prompts[prompt]++
			continue
		}
		out.Unprompted++
		if len(out.Examples) < 10 {
			out.Examples = append(out.Examples, what+" "+e.ObjectRef.Name)
		}
	}
	return out
}

// isWrite: a write of state, leaving out what the writes() count leaves
// out (lease renewals, Events, reviews).
func isWrite(e *localcluster.AuditEvent) bool {
	if e.ObjectRef == nil {
		return false
	}
	return writes(map[string]int{e.Verb + " " + e.ObjectRef.Resource: 1}) == 1
}

// jobOfEvent is the TrainJob a request is about: a TrainJob and the JobSet
// Trainer makes for it share its name; a Workload names its owner.
func jobOfEvent(e *localcluster.AuditEvent, jobOfWorkload func(string) string) string {
	switch e.ObjectRef.Resource {
	case "trainjobs", "jobsets":
		return e.ObjectRef.Name
	case "workloads":
		return jobOfWorkload(e.ObjectRef.Name)
	}
	return ""
}

func describe(e *localcluster.AuditEvent) string {
	what := e.Verb + " " + e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		what += "/" + e.ObjectRef.Subresource
	}
	return what
}
