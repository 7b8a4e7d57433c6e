// Package restartwatch stops the manager when what it learned at its start
// no longer holds, so it starts again in the right mode: the installed
// TrainJob CRD's shape (Trainer upgraded in place), and whether Kueue's
// Configuration turns its built-in TrainJob integration on.
package restartwatch

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
)

// BuiltInChanged compares what Kueue's Configuration file at path says of
// its built-in TrainJob integration with what the manager started under:
// an error saying what changed, nil when nothing did. A file that cannot be
// read now is no change: a mounted ConfigMap is swapped in place, and a
// file that was readable at start and is broken now is the admin's edit in
// progress, which must not stop a running manager.
func BuiltInChanged(path string, startedWithBuiltIn bool) error {
	cfg, err := discovery.LoadKueueConfig(path)
	if err != nil {
		return nil
	}
	switch now := discovery.BuiltInTrainJob(&cfg); {
	case now == startedWithBuiltIn:
		return nil
	case now:
		return fmt.Errorf("Kueue's configuration (%s) turns its built-in %q integration on: restarting to stand by (webhook only) and leave TrainJobs to it", path, discovery.InTreeFramework)
	default:
		return fmt.Errorf("Kueue's configuration (%s) turns its built-in %q integration off: restarting to take TrainJobs over", path, discovery.InTreeFramework)
	}
}

// builtInWatch re-reads Kueue's Configuration every interval.
type builtInWatch struct {
	path        string
	withBuiltIn bool
	every       time.Duration
	stop        func(error)
}

// Start implements manager.Runnable.
func (w *builtInWatch) Start(ctx context.Context) error {
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := BuiltInChanged(w.path, w.withBuiltIn); err != nil {
				w.stop(err)
				return nil
			}
		}
	}
}

// NeedLeaderElection: every replica watches, standbys too, since every
// replica serves the webhook and must change mode.
func (w *builtInWatch) NeedLeaderElection() bool { return false }

// WatchBuiltIn calls stop when Kueue's Configuration file turns the
// built-in TrainJob integration on or off, against what the manager
// started with, so it restarts in the mode the file asks for. The file is
// trainjob-kueue's copy of Kueue's Configuration (a mounted ConfigMap,
// which the kubelet refreshes within a minute or so); "" watches nothing.
func WatchBuiltIn(mgr ctrl.Manager, path string, startedWithBuiltIn bool, every time.Duration, stop func(error)) error {
	if path == "" {
		return nil
	}
	return mgr.Add(&builtInWatch{path: path, withBuiltIn: startedWithBuiltIn, every: every, stop: stop})
}
