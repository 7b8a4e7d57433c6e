package integration_test

import (
	"context"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/trainjob-kueue/trainjob-kueue/informercache"
	"github.com/trainjob-kueue/trainjob-kueue/restartwatch"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// The watch of scheduler-plugins' PodGroup CRD, wired as the manager wires
// it (its cache holding the TrainJob's CRD alone): a manager that started
// without the CRD sees it installed and stops to serve gang mode
// coscheduling. Through the manager's own cache it never saw it: a job
// admitted under coscheduling while the CRD was missing waited for ever.
func TestThePodGroupCRDWatchSeesTheCRDPastTheManagersCache(t *testing.T) {
	mgr, err := newManager(restCfg, scheme.New(), 0, "", func(o *ctrl.Options) { o.Cache = informercache.Options() })
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	// The suite's API server has the CRD: a manager that believes it
	// missing must see it.
	if err := restartwatch.WatchPodGroups(mgr, false, func(err error) {
		select {
		case stopped <- err:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = mgr.Start(runCtx) }()
	select {
	case err := <-stopped:
		if !strings.Contains(err.Error(), "was installed") {
			t.Errorf("stopped for %v, want the CRD installed", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the watch never saw the PodGroup CRD the API server serves")
	}
}
