package layers

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// date is a day written the way the docs write one.
var date = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)

// diaryFaults are where a Markdown document reads as a lab notebook
// rather than a manual: a heading that carries a date (an entry of a
// diary), or a section that names more than one day (results of several
// days side by side, or a history told in prose). A manual gives the
// latest result of each harness with its date once; git keeps the rest.
func diaryFaults(name, doc string) []string {
	var out []string
	section, days := "(the top)", []string{}
	closeSection := func() {
		if len(days) > 1 {
			out = append(out, fmt.Sprintf("%s, section %q names %d days (%s): give its latest result with its date once; the history is git's", name, section, len(days), strings.Join(days, ", ")))
		}
	}
	fenced := false
	for i, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced {
			continue
		}
		if strings.HasPrefix(line, "#") {
			closeSection()
			section, days = strings.TrimSpace(strings.TrimLeft(line, "#")), nil
			if date.MatchString(line) {
				out = append(out, fmt.Sprintf("%s:%d: heading %q carries a date: a diary's entry; name what the section is about", name, i+1, section))
			}
			continue
		}
		for _, d := range date.FindAllString(line, -1) {
			if !slices.Contains(days, d) {
				days = append(days, d)
			}
		}
	}
	closeSection()
	return out
}

// The docs are a manual, not a diary: README.md and docs/*.md hold no
// dated heading and no section of several days.
func TestTheDocsAreAManual(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	if len(files) < 10 {
		t.Fatalf("found %d documents: the test reads the wrong tree", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, fault := range diaryFaults(strings.TrimPrefix(f, "../"), string(data)) {
			t.Error(fault)
		}
	}
}

func TestTheDiaryRuleFindsEachFault(t *testing.T) {
	for name, tc := range map[string]struct {
		doc  string
		want int
	}{
		"a manual":                        {doc: "# Bench\n\n## Latest results\n\n2026-12-07, the 2-core machine.\n\n| a | b |\n\n## How to read it\n\nOn 2026-12-07 too.\n", want: 0},
		"a dated heading":                 {doc: "# Bench\n\n## Results of 2026-12-07\n\ntext\n", want: 1},
		"a section of two days":           {doc: "# Bench\n\n## Latest results\n\n2026-12-07: 8.26; on 2026-12-04 it was 6.24.\n", want: 1},
		"days in a code block are code":   {doc: "# Bench\n\n```\n2026-12-07 2026-12-04\n```\n", want: 0},
		"two sections, a day each":        {doc: "## A\n\n2026-12-07\n\n## B\n\n2026-12-04\n", want: 0},
		"the top of a document, two days": {doc: "2026-12-07 and 2026-12-06\n\n# Title\n", want: 1},
	} {
		if got := diaryFaults("doc.md", tc.doc); len(got) != tc.want {
			t.Errorf("%s: %d faults %v; want %d", name, len(got), got, tc.want)
		}
	}
}
