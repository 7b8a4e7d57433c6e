// Package onepass is the manager's cache wiring for the kinds whose watch
// events it decodes most (TrainJobs and Workloads): each event decoded in
// one pass over its line instead of client-go's five. The manager (and the
// integration tier, which runs it in process) wires it; nothing else.
package onepass
