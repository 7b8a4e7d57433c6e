package integration

import (
	"time"

	"github.com/trainjob-kueue/trainjob-kueue/settings"
)

// Options configure the integration: the manager's shared settings, and
// what the integration alone is tuned by.
type Options struct {
	settings.Shared

	// GangRetryInterval: how often a started job's gang that waits for
	// room is retried; zero means gang.DefaultRetryInterval.
	GangRetryInterval time.Duration
	// PolicyRetry: how long a job whose start an admission policy refused
	// is held before it is queued again, doubling with each refusal up to
	// 15 minutes; zero means one minute.
	PolicyRetry time.Duration
}
