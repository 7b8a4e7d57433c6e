package podsets

import (
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Topology reads a role's topology request from its pod template's Kueue
// annotations by the installed Kueue's rules: its validation and its
// feature gates (multi-layer slices, …) are process state of Kueue's, so
// the caller supplies them and this package stays a function of its input.
// Nil in Options: Kueue's topology-aware scheduling is off and PodSets
// carry no topology requests.
type Topology interface {
	Request(r *Role) (*kueue.PodSetTopologyRequest, error)
}
