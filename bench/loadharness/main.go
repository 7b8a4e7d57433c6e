package loadharness

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Main runs run (the command line parsed) until it returns or the process
// is interrupted, and exits non-zero naming the command on its error.
// controller-runtime's log is discarded: a harness reports what it
// measured, not its clients' chatter.
func Main(name string, run func(context.Context) error) {
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
