// Package explain answers a batch admin's question "why is my TrainJob
// (not) running?": per role the pods and their requests, the flavors Kueue
// assigned or could assign now, the ClusterQueue's quota, the position in
// the queue, and a one-line verdict. The kubectl plugin
// (trainjob-kueue explain) and the demo use it.
//
// The rule of the packages: explain reads, never writes; quota/ is
// arithmetic only (requests, roles, gang sizes); only integration/ writes to
// the API server. Explainer (fetch.go) does every read, with the caller's
// identity; everything else here is a function of what it read.
package explain
