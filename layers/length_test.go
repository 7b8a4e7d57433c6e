package layers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFunctionLines bounds every function outside tests, in the production
// packages and in hack/ alike (the bench, the scale run, the demo): one a
// reader can hold at once.
const maxFunctionLines = 80

// No function of ours, tests aside, is longer than maxFunctionLines: the
// module's and hack/tools/' own programs (image, krew), which are modules
// of their own. hack/tools/' component pins hold imports only (tools.go),
// no function to measure; generated files are left to their generator.
func TestNoFunctionOver80Lines(t *testing.T) {
	long := functionsOver(t, "..", maxFunctionLines)
	for _, f := range long {
		t.Errorf("%s is over %d lines: split it", f, maxFunctionLines)
	}
}

// The rule finds a long function, one of 81 lines, wherever our code is:
// in a package of the module and in a program of hack/tools/.
func TestTheLengthRuleFindsALongFunction(t *testing.T) {
	body := "package p\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", 79) + "}\n\nfunc short() {\n}\n"
	for _, file := range []string{"p.go", filepath.Join("hack", "tools", "image", "p.go")} {
		t.Run(file, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, file)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			got := functionsOver(t, dir, maxFunctionLines)
			if len(got) != 1 || !strings.Contains(got[0], "long (81 lines)") {
				t.Errorf("found %v, want long (81 lines) alone", got)
			}
		})
	}
}

// functionsOver lists the functions under root longer than max lines, as
// "path: name (n lines)".
func functionsOver(t *testing.T, root string, max int) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".cluster", ".bench", ".cache", "bin", "node_modules":
				return filepath.SkipDir
			}
			if rel, _ := filepath.Rel(root, path); upstreamCopy(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(d.Name(), "zz_generated") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > max {
				rel, _ := filepath.Rel(root, path)
				out = append(out, fmt.Sprintf("%s: %s (%d lines)", rel, fn.Name.Name, n))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// upstreamCopy: a folder a component build copies from an upstream module
// into its tools module (hack/tools/kueue-*/cmd, hack/tools/trainer-*/cmd:
// .gitignore keeps them out of the tree), not code of ours.
func upstreamCopy(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	return len(parts) == 4 && parts[0] == "hack" && parts[1] == "tools" && parts[3] == "cmd" &&
		(strings.HasPrefix(parts[2], "kueue-") || strings.HasPrefix(parts[2], "trainer-"))
}
