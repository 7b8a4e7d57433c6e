package main

import (
	"strings"
)

// integrationRequests keeps, of one identity's requests by "verb
// resource[/subresource]", those a TrainJob integration makes for its jobs:
// on TrainJobs, and on Workloads except their status. Events (the audit
// log does not say what they are about), leases and Kueue's queue status
// writes are left out for both integrations.
func integrationRequests(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		_, what, _ := strings.Cut(k, " ")
		if strings.HasPrefix(what, "trainjobs") || what == "workloads" {
			out[k] += v
		}
	}
	return out
}

// ownRequests keeps all of trainjob-kueue's requests but events and leases
// (left out for both integrations): its whole process is the integration,
// so what it reads to compute PodSets (a v2.3 job's runtime snapshot, say)
// counts, though the in-tree integration reads no such thing.
func ownRequests(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		_, what, _ := strings.Cut(k, " ")
		if what == "events" || what == "leases" {
			continue
		}
		out[k] += v
	}
	return out
}

// jobFrameworkOwned: field managers of Workload status writes only Kueue's
// job framework makes (the PodsReady condition, reclaimable pods). Kueue's
// scheduler never uses them, so in Kueue's process they are the in-tree
// integration's, counted exactly.
func jobFrameworkOwned(owner string) bool {
	return strings.HasPrefix(owner, "kueue-job-controller") || owner == "kueue-reclaimable-pods"
}

// inTreeStatusWrites are the in-tree integration's writes of Workload
// status: those of the job framework's own field managers in Kueue's
// process, plus its writes under shared ones (kueue-admission: the
// scheduler's admissions and the job framework's Finished) beyond what
// Kueue wrote under them in the ours set-up.
func inTreeStatusWrites(intree, ours map[string]int) int {
	n := 0
	shared := map[string]int{}
	for owner, v := range intree {
		if jobFrameworkOwned(owner) {
			n += v
		} else {
			shared[owner] += v
		}
	}
	for owner, v := range shared {
		n += max(0, v-ours[owner])
	}
	return n
}
