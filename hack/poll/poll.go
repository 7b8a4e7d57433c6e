// Package poll waits for conditions: in tests against real components, and
// in the local cluster's bring-up, which waits for the same components.
package poll

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Interval between two tries.
const Interval = 250 * time.Millisecond

// Eventually retries f until it succeeds, failing t with f's last error
// after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	if err := Until(timeout, f); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Until retries f until it succeeds, and returns f's last error after
// timeout: Eventually for set-up code that has no test to fail.
func Until(timeout time.Duration, f func() error) error {
	return UntilDone(context.Background(), timeout, f)
}

// stopped is an error after which trying again is pointless.
type stopped struct{ error }

func (s stopped) Unwrap() error { return s.error }

// Stop marks f's error as final: UntilDone returns it at once instead of
// trying again (a component that exited will not start serving).
func Stop(err error) error { return stopped{err} }

// UntilDone is Until that also gives up when ctx is done or f returns an
// error made by Stop.
func UntilDone(ctx context.Context, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return nil
		}
		var s stopped
		if errors.As(err, &s) {
			return s.error
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(Interval):
		}
	}
	return err
}

// Consistently checks f keeps succeeding for d.
func Consistently(t testing.TB, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(Interval)
	}
}
