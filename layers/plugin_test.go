package layers

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// managers are the packages only the manager runs: the kubectl plugin,
// a binary of its own with the user's identity, builds in none of them.
var managers = []string{"integration", "multikueue", "priorityboost", "queuecondition", "informercache", "restartwatch", "standby",
	"webhook", "metrics", "gang", "cmd/trainjob-kueue"}

// pluginViolations are the manager's packages among the plugin's deps.
func pluginViolations(deps []string) []string {
	var out []string
	for _, d := range deps {
		if slices.Contains(managers, d) {
			out = append(out, "the kubectl plugin builds in "+d+", the manager's: move what both need below it")
		}
	}
	return out
}

func TestThePluginBuildsInNoneOfTheManagersPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../cmd/kubectl-trainjob_kueue/").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var deps []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(line, module) {
			deps = append(deps, strings.TrimPrefix(line, module))
		}
	}
	if !slices.Contains(deps, "explain") {
		t.Fatalf("the plugin's deps %v lack explain: the test reads the wrong package", deps)
	}
	for _, v := range pluginViolations(deps) {
		t.Error(v)
	}
	if got := pluginViolations([]string{"explain", "integration"}); len(got) != 1 {
		t.Errorf("the rule finds %v in a plugin that builds in integration, want one violation", got)
	}
}
