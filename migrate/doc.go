// Package migrate answers, before anyone touches the cluster, what a
// switch from Kueue's built-in TrainJob integration to trainjob-kueue will
// do to each TrainJob (kubectl trainjob-kueue migrate --check): adopted as
// it is, adopted and mended at its next stop, its Workload corrected in
// place, re-created (losing its place in the queue) or, for a running job,
// stopped. It decides as Kueue's job framework will, which keeps a job's
// Workload when the job's PodSets are equivalent to the stored ones
// (jobframework.EquivalentToWorkload: count, minCount and containers per
// PodSet by position, tolerations until admitted; names are not
// compared), from the PodSets trainjob-kueue computes for the job.
//
// verdict.go decides (pure); fetch.go reads the cluster with one list per
// kind and projects every job; render.go prints the answer.
package migrate
