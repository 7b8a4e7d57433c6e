package localcluster

import (
	"context"
	"io"
	"testing"
)

// A MultiKueue set-up is a manager and at least one worker: fewer names
// are refused before anything starts.
func TestAMultiKueueSetUpNeedsAManagerAndAWorker(t *testing.T) {
	for _, names := range [][]string{nil, {"only-a-manager"}} {
		if _, _, err := UpMultiKueue(context.Background(), t.TempDir(), names, io.Discard, func(bool) Settings { return Settings{} }); err == nil {
			t.Errorf("%v: brought up", names)
		}
	}
}
