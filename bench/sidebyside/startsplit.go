package main

import (
	"slices"
	"strings"
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
)

// startSplit is each job's admitted → unsuspended cut in two at the API
// server, from its audit log: toStart, from Kueue's admission write of
// the job's Workload being answered (its commit, which the watches see,
// comes a moment before) to the start write of the integration (starter)
// arriving — the integration's side: the Workload's watch event, its
// queue, its reconcile — and start, that write's own time at the API
// server, the TrainJob's admission webhooks (Trainer's, Kueue's, ours)
// included. Where the latency goes when the bench's p99 moves.
type startSplit struct {
	toStart, start []time.Duration
}

// admissionManager is the field manager of Kueue's scheduler's admission
// write (quota reserved, and admitted when no check waits).
const admissionManager = "kueue-admission"

// splitStarts splits the starts in events by starter (a user name). A
// job's start is the starter's first successful write of the TrainJob
// (not its status) with an admission write of its Workload before it; its
// admission, the last of those: Kueue's scheduler writes the Workload's
// status with the same field manager while it waits (why it is not
// admitted yet). Times are the API server's: one clock. The start can
// arrive a moment before the admission's answer (the watch saw its
// commit first): a split a few ms below zero.
func splitStarts(events []localcluster.AuditEvent, starter string) startSplit {
	admissions := map[string][]localcluster.AuditEvent{} // by the TrainJob's namespace/name
	var writes []localcluster.AuditEvent
	for _, e := range events {
		if !e.Succeeded() {
			continue
		}
		ref := e.ObjectRef
		switch {
		case ref.Resource == "workloads" && ref.Subresource == "status" && e.Verb == "patch" && fieldManager(e.RequestURI) == admissionManager:
			if job, ok := trainJobOf(ref.Name); ok {
				key := ref.Namespace + "/" + job
				admissions[key] = append(admissions[key], e)
			}
		case ref.Resource == "trainjobs" && ref.Subresource == "" && (e.Verb == "patch" || e.Verb == "update") && e.User.Username == starter:
			writes = append(writes, e)
		}
	}
	slices.SortStableFunc(writes, func(a, b localcluster.AuditEvent) int { return a.Received.Compare(b.Received) })
	var s startSplit
	started := map[string]bool{}
	for _, w := range writes {
		key := w.ObjectRef.Namespace + "/" + w.ObjectRef.Name
		if started[key] {
			continue
		}
		var admitted *localcluster.AuditEvent
		for i, a := range admissions[key] {
			if !a.Received.After(w.Received) && (admitted == nil || a.Received.After(admitted.Received)) {
				admitted = &admissions[key][i]
			}
		}
		if admitted == nil {
			continue // a write before the job was admitted: not its start
		}
		started[key] = true
		s.toStart = append(s.toStart, w.Received.Sub(admitted.Completed))
		s.start = append(s.start, w.Completed.Sub(w.Received))
	}
	return s
}

// trainJobOf is the TrainJob a Workload of the job framework's naming is
// for: "trainjob-<name>-<5 hex digits of a hash>".
func trainJobOf(workload string) (string, bool) {
	rest, ok := strings.CutPrefix(workload, "trainjob-")
	if !ok || len(rest) < 7 || rest[len(rest)-6] != '-' {
		return "", false
	}
	return rest[:len(rest)-6], true
}
