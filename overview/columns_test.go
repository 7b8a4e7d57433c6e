package overview

import (
	"testing"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
)

// list's table maps every state, and shows a position exactly where it
// says.
func TestEveryStateHasColumns(t *testing.T) {
	table := positions()
	if missing := lifecycle.Unmapped(func(s lifecycle.State) bool { _, ok := table[s]; return ok }); len(missing) > 0 {
		t.Errorf("list does not map the states %v (overview/columns.go)", missing)
	}
	for s, want := range table {
		if got := showsPosition(s); got != want {
			t.Errorf("shows a position for %s: %v, want %v", s, got, want)
		}
	}
}
