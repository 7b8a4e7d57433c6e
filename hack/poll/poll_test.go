package poll

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntilDoneEndsAtAStopWithoutTryingAgain(t *testing.T) {
	exited := errors.New("exited")
	tries := 0
	err := UntilDone(context.Background(), time.Minute, func() error {
		tries++
		return Stop(exited)
	})
	if !errors.Is(err, exited) || tries != 1 {
		t.Fatalf("got %v after %d tries, want %v after 1", err, tries, exited)
	}
}

func TestUntilDoneEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := UntilDone(ctx, time.Minute, func() error { return errors.New("not yet") })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want %v", err, context.Canceled)
	}
}

func TestUntilReturnsTheLastErrorAfterItsTimeout(t *testing.T) {
	tries := 0
	err := Until(3*Interval, func() error {
		tries++
		return errors.New("not yet")
	})
	if err == nil || err.Error() != "not yet" || tries < 2 {
		t.Fatalf("got %v after %d tries, want the last error after several", err, tries)
	}
}
