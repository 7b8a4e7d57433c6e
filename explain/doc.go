// Package explain answers a batch admin's question "why is my TrainJob
// (not) running?": per role the pods and their requests, the flavors Kueue
// assigned or could assign now, the ClusterQueue's quota, the position in
// the queue, a one-line verdict, and when a waiting job is expected to
// start. The kubectl plugin (trainjob-kueue explain and plan) and the demo
// use it.
//
// Explainer does every read, with the caller's identity, and never
// writes: fetch.go for one job (or one not yet created: dryrun.go,
// whatif.go), forecastfetch.go for the cluster read once, page by page,
// whose ClusterQueues package forecast plays forward. verdict.go and
// render.go are functions of what was read; the ClusterQueue model they
// judge fit by (quota, flavors, cohort) is forecast's.
package explain
