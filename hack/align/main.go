// Command align keeps the modules of one family on identical versions of
// every module they share. A family is the main module and the tools
// modules (hack/tools/*) that build against the same Kubernetes minor.
//
// Why: the Go build cache reuses a compiled package only when the package
// and everything under it are the same versions. Components that pin
// k8s.io/client-go v0.36.1 and v0.36.2, or the same client-go over two
// golang.org/x/net releases, compile client-go, apimachinery, api and
// apiserver once each, and a cold `make demo` pays for it several times.
//
//	go run ./hack/align          raise every shared module to the family's highest version
//	go run ./hack/align -check   list what differs; exit 1 if anything does
//
// A component's own module (Kueue, Trainer, JobSet, kwok, …) is never moved:
// aligning changes only what the components are built against, within the
// versions their go.mod already accepts (MVS only raises). Modules a member
// replaces (Kubernetes' staging repositories) are the family's fixed point.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/semver"
)

// member is one module of a family and the packages it builds.
type member struct {
	dir      string
	packages []string
}

// family: modules that build against the same Kubernetes minor. Members
// outside every family (older Kueue, Trainer and JobSet releases the smokes
// run) keep their own versions.
type family struct {
	name    string
	members []member
}

var families = []family{
	{"k8s-v0.36", []member{
		{".", []string{"-test", "./..."}},
		{"hack/tools/kueue-v0.19.2", []string{"sigs.k8s.io/kueue/cmd/kueue"}},
		{"hack/tools/kwok", []string{"sigs.k8s.io/kwok/cmd/kwok"}},
		{"hack/tools/jobset-v0.12.0", []string{"sigs.k8s.io/jobset"}},
		{"hack/tools/trainer-v2.3.0", []string{"github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager"}},
	}},
	{"k8s-v0.37", []member{
		{"hack/tools/kubernetes-v1.37.2", []string{"k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager", "k8s.io/kubernetes/cmd/kube-scheduler", "k8s.io/kubernetes/cmd/kubectl"}},
	}},
	{"k8s-v0.34", []member{
		{"hack/tools/kubernetes", []string{"k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager", "k8s.io/kubernetes/cmd/kubectl"}},
		{"hack/tools/scheduler", []string{"sigs.k8s.io/scheduler-plugins/cmd/scheduler"}},
		{"hack/tools/etcd", []string{"go.etcd.io/etcd/server/v3"}},
		{"hack/tools/trainer-v2.1.0", []string{"github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager"}},
		{"hack/tools/jobset-v0.10.1", []string{"sigs.k8s.io/jobset"}},
	}},
}

// components: the modules a member is built for; their versions are the
// member's identity (the main module uses Trainer v2.2.1's API types while
// the cluster runs Trainer v2.3.0).
var components = map[string]bool{
	"sigs.k8s.io/kueue":              true,
	"github.com/kubeflow/trainer/v2": true,
	"sigs.k8s.io/jobset":             true,
	"sigs.k8s.io/kwok":               true,
	"sigs.k8s.io/scheduler-plugins":  true,
	"k8s.io/kubernetes":              true,
	"go.etcd.io/etcd/server/v3":      true,
}

func main() {
	check := flag.Bool("check", false, "only list the differences; exit 1 if there are any")
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	ok := true
	for _, f := range families {
		done, err := alignFamily(*root, f, *check)
		if err != nil {
			fmt.Fprintf(os.Stderr, "align %s: %v\n", f.name, err)
			os.Exit(2)
		}
		ok = ok && done
	}
	if !ok {
		os.Exit(1)
	}
}

// alignFamily raises members until they agree (at most a few rounds: a raise
// can pull newer transitive modules). With check it only reports.
func alignFamily(root string, f family, check bool) (bool, error) {
	for round := 0; round < 6; round++ {
		uses := map[string]map[string]use{} // module -> member dir -> use
		for _, m := range f.members {
			mods, err := modulesOf(filepath.Join(root, m.dir), m.packages)
			if err != nil {
				return false, err
			}
			for path, u := range mods {
				if uses[path] == nil {
					uses[path] = map[string]use{}
				}
				uses[path][m.dir] = u
			}
		}
		raises, conflicts := plan(uses)
		for _, c := range conflicts {
			fmt.Fprintf(os.Stderr, "%s: %s\n", f.name, c)
		}
		if len(raises) == 0 {
			return len(conflicts) == 0, nil
		}
		if check {
			for _, dir := range sortedKeys(raises) {
				fmt.Fprintf(os.Stderr, "%s: %s needs %s\n", f.name, dir, strings.Join(raises[dir], " "))
			}
			return false, nil
		}
		for _, dir := range sortedKeys(raises) {
			fmt.Fprintf(os.Stderr, "%s: raising %d modules in %s\n", f.name, len(raises[dir]), dir)
			if err := gocmd(filepath.Join(root, dir), append([]string{"get"}, raises[dir]...)...); err != nil {
				return false, err
			}
		}
	}
	return false, fmt.Errorf("members still differ after 6 rounds")
}

// use is the version a member builds a module at.
type use struct {
	version  string
	replaced bool // the member pins it with a replace directive
}

// plan: for each module two or more members build, the highest version
// among them, and which members must raise to it. A member's replace is a
// fixed point: if another member needs more, that is a conflict to resolve
// by hand.
func plan(uses map[string]map[string]use) (map[string][]string, []string) {
	raises := map[string][]string{}
	var conflicts []string
	for _, path := range sortedKeys(uses) {
		byMember := uses[path]
		if len(byMember) < 2 || components[path] {
			continue
		}
		target, pinned := "", ""
		for _, u := range byMember {
			if semver.Compare(u.version, target) > 0 {
				target = u.version
			}
			if u.replaced {
				pinned = u.version
			}
		}
		if pinned != "" && pinned != target {
			conflicts = append(conflicts, fmt.Sprintf("%s is replaced at %s but another member builds %s", path, pinned, target))
			continue
		}
		for _, dir := range sortedKeys(byMember) {
			if byMember[dir].version != target {
				raises[dir] = append(raises[dir], path+"@"+target)
			}
		}
	}
	return raises, conflicts
}

// modulesOf lists the modules that provide the packages a member builds.
func modulesOf(dir string, packages []string) (map[string]use, error) {
	args := append([]string{"list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{with .Replace}} {{.Version}}{{end}}{{end}}{{end}}"}, packages...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w: %s", dir, err, stderr.String())
	}
	mods := map[string]use{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch len(f) {
		case 2:
			mods[f[0]] = use{version: f[1]}
		case 3:
			mods[f[0]] = use{version: f[2], replaced: true}
		}
	}
	return mods, nil
}

func gocmd(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
