// Package lifecycle is the one model of where a TrainJob is on its way
// through the queue: it takes what is observed of the job (the TrainJob,
// its Workload and the marks trainjob-kueue and MultiKueue's worker put on
// it) and returns one State of a closed set, with its reason and words.
// Every reader — the queue-state metric, kubectl trainjob-kueue list and
// explain, migrate --check, the condition trainjob-kueue writes on the
// TrainJob — takes its state from here and maps it through one exhaustive
// table of its own (Unmapped tells, in the reader's test, a state it left
// out). JobFingerprint and WorkloadFingerprint are what Of reads, for a
// controller that filters its events by them (the queue condition's), held
// to Of by a test. Pure: no client, no clock.
package lifecycle
