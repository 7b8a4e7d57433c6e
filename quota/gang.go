package quota

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// Waves group the roles of a job by when the scheduler first sees their
// pods: JobSet creates a role's Jobs only once the roles it depends on are
// ready or complete (dependsOn), so initializers come a wave or two before
// the trainer nodes. A gang can only wait for pods of its own wave: the
// next wave's pods do not exist yet. WaveOf[i] is the wave of roles[i].
func Waves(roles []podsets.Role) (waveOf []int, count int) {
	waveOf = make([]int, len(roles))
	index := make(map[string]int, len(roles))
	for i := range roles {
		w := 0
		for _, d := range roles[i].DependsOn {
			// JobSet only lets a role depend on roles before it.
			if j, ok := index[d.Name]; ok {
				w = max(w, waveOf[j]+1)
			}
		}
		waveOf[i] = w
		index[roles[i].Name] = i
		count = max(count, w+1)
	}
	return waveOf, count
}

// Gang is the size of the group of pods that must start together.
type Gang struct {
	MinMember    int32
	MinResources corev1.ResourceList
}

func (g *Gang) add(r *podsets.Role, pods int32) {
	if pods <= 0 {
		return
	}
	g.MinMember += pods
	g.MinResources = Add(g.MinResources, Scale(PodRequests(&r.Template.Spec), pods))
}

// WaveGang is the gang of one wave, in a PodGroup of its own.
type WaveGang struct {
	// Roles are the roles of the wave, in runtime order.
	Roles []string
	Gang
}

// WaveGangs sizes one gang per wave, in wave order: what a PodGroup per
// wave needs, where each wave's pods carry their own group's label. A gang
// counts the pods that will be created: not those progress says already
// succeeded (a job re-admitted after some of its pods completed runs only
// the rest, and a gang waiting for the completed ones would wait for ever).
// A wave with no pod left has an empty gang.
func WaveGangs(roles []podsets.Role, progress map[string]Progress) []WaveGang {
	waveOf, n := Waves(roles)
	out := make([]WaveGang, n)
	for i := range out {
		out[i].MinResources = corev1.ResourceList{}
	}
	for i := range roles {
		w := &out[waveOf[i]]
		w.Roles = append(w.Roles, roles[i].Name)
		w.add(&roles[i], running(&roles[i], progress[roles[i].Name]))
	}
	return out
}

// Progress is how far the Jobs of one role got, from the TrainJob's
// jobsStatus: how many of its Jobs have every pod running and ready, and how
// many succeeded; and, from the Jobs themselves, how many pods of the Jobs
// not yet complete succeeded (an Indexed Job's completed indexes), which
// their Jobs never create again.
type Progress struct {
	Ready     int32
	Succeeded int32
	PodsDone  int32
}

// placed: every pod of the role went through the scheduler (it is running
// or done).
func placed(r *podsets.Role, p Progress) bool { return p.Ready+p.Succeeded >= r.Replicas }

// done: every Job of the role succeeded.
func done(r *podsets.Role, p Progress) bool { return p.Succeeded >= r.Replicas }

// running is the number of the role's pods that are not finished.
func running(r *podsets.Role, p Progress) int32 {
	return max(max(r.Replicas-p.Succeeded, 0)*r.PodsPerReplica-p.PodsDone, 0)
}

// Placing is the wave the scheduler has to place now: the first one with a
// role whose pods are not all placed; once every wave is placed, the last.
func Placing(roles []podsets.Role, progress map[string]Progress) int {
	waveOf, n := Waves(roles)
	first := n - 1
	for i := range roles {
		if !placed(&roles[i], progress[roles[i].Name]) {
			first = min(first, waveOf[i])
		}
	}
	return max(first, 0)
}

// SharedGang sizes a PodGroup whose label every role of the job carries, as
// Trainer's coscheduling plugin labels them. Coscheduling counts as
// siblings and as placed members the group's pods that kube-scheduler's pod
// informer holds, which are the unfinished ones: the gang is the wave being
// placed plus the earlier waves' pods still running. Trainer counts every
// role, finished or not yet created, and the initializers then wait for
// trainer pods that only start after them, for ever.
//
// The size moves to the next wave as soon as the current one is placed,
// before its pods finish and JobSet creates the next wave's: a gang sized
// for an earlier wave would let the first few trainer pods start alone.
// Earlier pods that finish meanwhile leave the gang too large, which only
// holds the next wave back until the size is written again.
func SharedGang(roles []podsets.Role, progress map[string]Progress) Gang {
	waveOf, _ := Waves(roles)
	w := Placing(roles, progress)
	g := Gang{MinResources: corev1.ResourceList{}}
	for i := range roles {
		r := &roles[i]
		if waveOf[i] <= w {
			g.add(r, running(r, progress[r.Name]))
		}
	}
	return g
}

// Due reports whether every role that should be running now is placed: a
// role is due once what it depends on is ready or complete. This is Kueue's
// PodsReady for a job that starts in waves: a job whose initializers run
// for longer than waitForPodsReady's timeout is running, not stuck, and
// each later wave is held to the recovery timeout.
func Due(roles []podsets.Role, progress map[string]Progress) bool {
	return len(Waiting(roles, progress)) == 0
}

// Waiting names the roles that are due and not all placed, in runtime
// order.
func Waiting(roles []podsets.Role, progress map[string]Progress) []string {
	index := make(map[string]*podsets.Role, len(roles))
	for i := range roles {
		index[roles[i].Name] = &roles[i]
	}
	var out []string
	for i := range roles {
		r := &roles[i]
		due := true
		for _, d := range r.DependsOn {
			dep, ok := index[d.Name]
			if !ok {
				continue
			}
			if d.Complete && !done(dep, progress[d.Name]) || !d.Complete && !placed(dep, progress[d.Name]) {
				due = false
			}
		}
		if due && !placed(r, progress[r.Name]) {
			out = append(out, r.Name)
		}
	}
	return out
}

// PodsReadyTimeouts are Kueue's waitForPodsReady settings.
type PodsReadyTimeouts struct {
	// Timeout bounds the time from admission to PodsReady.
	Timeout time.Duration
	// Recovery, when set, bounds the time PodsReady may be false again
	// after it was true; nil means for ever.
	Recovery *time.Duration
}

// TimeoutConflicts names the waitForPodsReady settings under which a job
// whose gang waits up to scheduleTimeout at coscheduling's Permit stage
// can't become ready while it has to wait for room: Kueue evicts it before
// the scheduler gives up on the gang and frees what the waiting members
// hold, on every attempt. waves is how many waves the job starts in; every
// wave after the first starts under the recovery timeout.
func TimeoutConflicts(scheduleTimeout time.Duration, w PodsReadyTimeouts, waves int) []string {
	if scheduleTimeout <= 0 {
		return nil
	}
	var out []string
	if w.Timeout > 0 && w.Timeout <= scheduleTimeout {
		out = append(out, fmt.Sprintf("waitForPodsReady.timeout (%s) is not longer than the gang's schedule timeout (%s)", w.Timeout, scheduleTimeout))
	}
	if waves > 1 && w.Recovery != nil && *w.Recovery <= scheduleTimeout {
		out = append(out, fmt.Sprintf("waitForPodsReady.recoveryTimeout (%s), which bounds the start of every wave after the first (the trainer nodes after the initializers), is not longer than the gang's schedule timeout (%s)", *w.Recovery, scheduleTimeout))
	}
	return out
}
