package overview

import "github.com/trainjob-kueue/trainjob-kueue/lifecycle"

// positions is list's table of the lifecycle's states: whether a job in
// the state has a position in its ClusterQueue to show (one waiting for a
// reservation has).
func positions() map[lifecycle.State]bool {
	return map[lifecycle.State]bool{
		lifecycle.NotQueued: false, lifecycle.Queued: true, lifecycle.Requeued: true,
		lifecycle.WaitingForRuntime: false, lifecycle.HeldByPolicy: false, lifecycle.HeldOnWorker: false, lifecycle.Inactive: false,
		lifecycle.QuotaReserved: false, lifecycle.Admitted: false, lifecycle.Running: false, lifecycle.Evicted: false,
		lifecycle.Finished: false, lifecycle.Failed: false,
	}
}

// showsPosition: a job in state s shows its position.
func showsPosition(s lifecycle.State) bool { return s.Waiting() }
