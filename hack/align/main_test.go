package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The committed go.mod files agree: a go get in one member that leaves the
// others behind fails here, naming what to run (go run ./hack/align).
func TestEveryFamilySharesOneVersionOfEachModule(t *testing.T) {
	for _, f := range families {
		agreed, err := alignFamily("../..", f, true)
		if err != nil {
			t.Fatal(err)
		}
		if !agreed {
			t.Errorf("family %s: members build shared modules at different versions (listed above): run go run ./hack/align", f.name)
		}
	}
}

func TestPlan(t *testing.T) {
	cases := map[string]struct {
		uses          map[string]map[string]use
		wantRaises    map[string][]string
		wantConflicts []string
	}{
		"the lower member is raised to the higher one": {
			uses:       map[string]map[string]use{"golang.org/x/net": {"a": {version: "v0.40.0"}, "b": {version: "v0.42.0"}}},
			wantRaises: map[string][]string{"a": {"golang.org/x/net@v0.42.0"}},
		},
		"a module only one member builds is its own business": {
			uses:       map[string]map[string]use{"golang.org/x/net": {"a": {version: "v0.40.0"}}},
			wantRaises: map[string][]string{},
		},
		"a component's own module never moves": {
			uses:       map[string]map[string]use{"github.com/kubeflow/trainer/v2": {"main": {version: "v2.2.1"}, "trainer": {version: "v2.3.0"}}},
			wantRaises: map[string][]string{},
		},
		"a replace is the fixed point": {
			uses:       map[string]map[string]use{"k8s.io/api": {"kubernetes": {version: "v0.35.4", replaced: true}, "etcd": {version: "v0.35.1"}}},
			wantRaises: map[string][]string{"etcd": {"k8s.io/api@v0.35.4"}},
		},
		"a member needing more than a replace allows is a conflict, not a raise": {
			uses:          map[string]map[string]use{"k8s.io/api": {"kubernetes": {version: "v0.35.4", replaced: true}, "kwok": {version: "v0.36.1"}}},
			wantRaises:    map[string][]string{},
			wantConflicts: []string{"k8s.io/api is replaced at v0.35.4 but another member builds v0.36.1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			raises, conflicts := plan(tc.uses)
			if diff := cmp.Diff(tc.wantRaises, raises); diff != "" {
				t.Errorf("raises (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantConflicts, conflicts); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
		})
	}
}
