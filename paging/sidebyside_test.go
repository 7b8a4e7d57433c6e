package paging_test

import (
	"errors"
	"testing"

	"github.com/trainjob-kueue/trainjob-kueue/paging"
)

// Whichever list fails first, Wait says the failure of the first started.
func TestSideBySideSaysTheFirstStartedFailure(t *testing.T) {
	var s paging.SideBySide
	slow, fast := errors.New("workloads"), errors.New("trainjobs")
	release := make(chan struct{})
	s.Go(func() error { <-release; return slow })
	s.Go(func() error { defer close(release); return fast })
	s.Go(func() error { return nil })
	if err := s.Wait(); err != slow {
		t.Errorf("Wait: %v, want %v", err, slow)
	}
}
