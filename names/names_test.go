package names

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/kueue/pkg/controller/constants"
)

// README's "Names we own" lists every name declared here, each in a table
// row of its own, and nothing under our domain that is not.
func TestReadmeListsEveryName(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Names we own")
	if !ok {
		t.Fatal(`README.md has no "## Names we own" section`)
	}
	if end := strings.Index(section, "\n#"); end >= 0 {
		section = section[:end]
	}
	declared := declaredNames(t)
	for _, name := range declared {
		if !strings.Contains(section, "| `"+name) {
			t.Errorf("README's Names we own has no row for %q (names/names.go)", name)
		}
	}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		name, _, _ = strings.Cut(name, ":")
		if !contains(declared, name) {
			t.Errorf("README's Names we own lists %q, which names/names.go does not declare", name)
		}
	}
}

// declaredNames are the string constants of names.go.
func declaredNames(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return true
	})
	if len(out) < 8 {
		t.Fatalf("names.go declares %d names: parsed the wrong file?", len(out))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Kueue's names we read or write are Kueue's own.
func TestKueuesNamesAreKueues(t *testing.T) {
	if KueuePriorityBoostAnnotation != constants.PriorityBoostAnnotationKey {
		t.Errorf("KueuePriorityBoostAnnotation = %q, Kueue's is %q", KueuePriorityBoostAnnotation, constants.PriorityBoostAnnotationKey)
	}
}

// Every admission webhook the manifests give our domain is declared, so
// the table names each one an admin sees in kubectl get
// mutatingwebhookconfigurations.
func TestEveryWebhookIsDeclared(t *testing.T) {
	manifests, err := os.ReadFile("../config/webhook/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	declared := declaredNames(t)
	var seen int
	for _, line := range strings.Split(string(manifests), "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "name: ")
		if !ok || !strings.HasSuffix(name, ".trainjob-kueue.dev") {
			continue
		}
		seen++
		if !contains(declared, name) {
			t.Errorf("config/webhook/manifests.yaml has webhook %q, which names/names.go does not declare", name)
		}
	}
	if seen < 4 {
		t.Fatalf("found %d of our webhooks in config/webhook/manifests.yaml: parsed the wrong file?", seen)
	}
}
