// Package loadharness is what the two load harnesses, bench/sidebyside (the side
// by side with Kueue's in-tree integration and the floor) and bench/scale
// (thousands of queued jobs and waves of admission), share: the load's job
// mix, their common flags and entry point, the ClusterQueues' readiness,
// each job's first time at a milestone, request sums, and the drawing
// primitives of their plots. What each harness measures and reports stays
// in it.
package loadharness
