package quota

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// Phase is a set of roles whose pods run at the same time. Trainer starts the
// trainer nodes only after the initializers finished (dependsOn), so a gang
// that counts both waits for pods that can never coexist.
type Phase string

const (
	PhaseInitialize Phase = "Initialize"
	PhaseTrain      Phase = "Train"
)

// PhaseOf tells in which phase a role runs.
func PhaseOf(r *podsets.Role) Phase {
	if r.IsInitializer() {
		return PhaseInitialize
	}
	return PhaseTrain
}

// Gang is the size of the group of pods that must start together.
type Gang struct {
	MinMember    int32
	MinResources corev1.ResourceList
}

// GangOf sizes the gang of one phase of a job; a phase with no roles has a
// zero Gang.
func GangOf(roles []podsets.Role, phase Phase) Gang {
	g := Gang{MinResources: corev1.ResourceList{}}
	for i := range roles {
		if PhaseOf(&roles[i]) != phase {
			continue
		}
		g.MinMember += roles[i].Count()
		g.MinResources = Add(g.MinResources, Scale(PodRequests(&roles[i].Template.Spec), roles[i].Count()))
	}
	return g
}
