// Package poll waits for conditions in tests against real components.
package poll

import (
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
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return nil
		}
		time.Sleep(Interval)
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
