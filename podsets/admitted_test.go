package podsets_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

func TestAdmitted(t *testing.T) {
	type shape struct {
		Name              string
		Replicas, PerRepl int32
		DependsOn         []string
	}
	role := func(name string, replicas, per int32, deps ...string) podsets.Role {
		r := podsets.Role{Name: name, Replicas: replicas, PodsPerReplica: per}
		for _, d := range deps {
			r.DependsOn = append(r.DependsOn, podsets.Dependency{Name: d, Complete: true})
		}
		return r
	}
	ps := func(name string, count int32) kueue.PodSet {
		return kueue.PodSet{Name: kueue.NewPodSetReference(name), Count: count}
	}
	shapes := func(roles []podsets.Role) []shape {
		var out []shape
		for _, r := range roles {
			s := shape{Name: r.Name, Replicas: r.Replicas, PerRepl: r.PodsPerReplica}
			for _, d := range r.DependsOn {
				s.DependsOn = append(s.DependsOn, d.Name)
			}
			out = append(out, s)
		}
		return out
	}
	cases := map[string]struct {
		roles    []podsets.Role
		admitted []kueue.PodSet
		want     []shape
	}{
		"unchanged": {
			roles:    []podsets.Role{role("init", 1, 1), role("node", 1, 4, "init")},
			admitted: []kueue.PodSet{ps("init", 1), ps("node", 4)},
			want:     []shape{{"init", 1, 1, nil}, {"node", 1, 4, []string{"init"}}},
		},
		"a replicatedJob added to the runtime does not run": {
			roles:    []podsets.Role{role("init", 1, 1), role("eval", 1, 1), role("node", 1, 4, "init")},
			admitted: []kueue.PodSet{ps("init", 1), ps("node", 4)},
			want:     []shape{{"init", 1, 1, nil}, {"node", 1, 4, []string{"init"}}},
		},
		"counts are the admitted ones": {
			roles:    []podsets.Role{role("node", 1, 8), role("workers", 2, 3)},
			admitted: []kueue.PodSet{ps("node", 4), ps("workers", 4)},
			want:     []shape{{"node", 1, 4, nil}, {"workers", 2, 2, nil}},
		},
		"counts that do not split over the replicas": {
			roles:    []podsets.Role{role("workers", 2, 3)},
			admitted: []kueue.PodSet{ps("workers", 5)},
			want:     []shape{{"workers", 1, 5, nil}},
		},
		"a replicatedJob removed from the runtime still runs": {
			roles:    []podsets.Role{role("node", 1, 4)},
			admitted: []kueue.PodSet{ps("init", 1), ps("node", 4)},
			want:     []shape{{"node", 1, 4, nil}, {"init", 1, 1, nil}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, shapes(podsets.Admitted(tc.roles, tc.admitted))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
