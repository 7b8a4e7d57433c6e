// Package discovery is what trainjob-kueue learns once, at start: the
// installed Trainer's TrainJob API shape (from its CRD), the installed
// Kueue release (from the Workload CRD), the deployed Kueue's
// Configuration — the settings ours must agree with, the set-ups we refuse
// to start on and its feature gates — the topology settings, and whether
// scheduler-plugins' PodGroup CRD exists. Discover returns them as one
// value, Facts; cmd/ wires it into the integration and explain. WatchShape
// stops the manager when Trainer's CRD changes shape under it.
package discovery
