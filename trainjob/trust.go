package trainjob

import "time"

// TimeLeftBelieved is the one trust rule for a time left a job reports
// (Trainer v2.2+'s status.trainerStatus.estimatedRemainingSeconds): a
// claim of left is believed once the job has run as long as left, or for
// enough, whichever is less. A job can't be believed nearly done before it
// has run as long as "nearly done" means, so a job that says "10 s left" at
// its first report gains nothing by it, while a long job's honest estimate
// counts once it has run enough. The expected end (forecast) and the
// preemption cost's time-left part both read it.
func TimeLeftBelieved(ran, left, enough time.Duration) bool {
	return ran >= min(left, enough)
}
