// Package forecast plays a ClusterQueue forward: when is a waiting
// TrainJob expected to start, and after which running jobs' ends?
//
// Its model of a ClusterQueue (queue.go: Queue and the quota Ledger; fit.go:
// Kueue's flavor assignment as a what-if, Assign; cohort.go: what the other
// queues of a cohort lend) is the one explain's verdict also reads. end.go
// is a running job's expected end (EndOf: the time left Trainer reports,
// under the trust rule trainjob.TimeLeftBelieved shares with the preemption
// cost; its progress rate; its runtime's history; Kueue's maximum execution
// time) and a waiting one's expected run (RunsFor). forecast.go releases
// the running jobs' quota at their ends and admits the waiting ones in
// Kueue's order when they fit (Forecast), one fit per distinct shape in
// line at each end, so a queue of ten thousand jobs costs about as many
// fits as it has shapes times ends. expected.go says the result as list,
// explain and plan print it (ExpectedStart).
//
// Pure: it takes what explain.Explainer read and returns data; no client,
// no clock (the caller passes now).
package forecast
