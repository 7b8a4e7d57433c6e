package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// Switch changes which integration runs the cluster's TrainJobs, live, in
// the order docs/install.md's runbook gives an admin, so that some webhook
// suspends every queued TrainJob at every moment:
//
// to ours: trainjob-kueue starts standing by (its webhook alone, since
// Kueue's configuration still runs the built-in integration); Kueue's
// configuration turns the built-in integration off and Kueue restarts;
// trainjob-kueue sees the change and restarts taking TrainJobs over.
//
// to intree: Kueue's configuration turns the built-in integration on;
// trainjob-kueue sees it and restarts standing by; Kueue restarts with
// its integration; trainjob-kueue stops and its webhooks go, once no
// unfinished job carries its entries (until then it stands by and hands
// the jobs Kueue stops back; switch again to stop it).
//
// On a MultiKueue manager it switches the whole set-up, in the runbook's
// order: to ours, each worker first (a worker under ours runs what a
// manager under either integration dispatches), then the manager; to
// intree, the manager first, then each worker. So the one mixed state is
// always a manager under Kueue's integration dispatching to workers under
// ours. A worker alone switches as a plain cluster.
//
// root is the checkout trainjob-kueue is built from.
func (c *Cluster) Switch(ctx context.Context, root, to string, progress io.Writer) error {
	if to != IntegrationOurs && to != IntegrationInTree {
		return fmt.Errorf("INTEGRATION=%q: switch to ours or intree", to)
	}
	if c.state.Settings.MultiKueue != MultiKueueManager {
		return c.switchOne(ctx, root, to, progress)
	}
	workers, err := c.workers(ctx, root)
	if err != nil {
		return err
	}
	for _, one := range switchOrder(c, workers, to) {
		fmt.Fprintf(progress, "switch: %s\n", filepath.Base(one.Dir))
		if err := one.switchOne(ctx, root, to, progress); err != nil {
			return fmt.Errorf("switching %s: %w", filepath.Base(one.Dir), err)
		}
	}
	return nil
}

// switchOrder is the runbook's order on a MultiKueue set-up: to ours, the
// workers, then the manager; to intree, the manager, then the workers.
func switchOrder[C any](manager C, workers []C, to string) []C {
	if to == IntegrationInTree {
		return append([]C{manager}, workers...)
	}
	return append(slices.Clone(workers), manager)
}

// workers are the local clusters a MultiKueue manager dispatches to: its
// MultiKueueClusters, each named as the local cluster it reaches
// (ConnectWorkers).
func (c *Cluster) workers(ctx context.Context, root string) ([]*Cluster, error) {
	scheme := runtime.NewScheme()
	utilruntime.Must(kueue.AddToScheme(scheme))
	admin, err := c.Client(scheme)
	if err != nil {
		return nil, err
	}
	var list kueue.MultiKueueClusterList
	if err := admin.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing the manager's MultiKueueClusters: %w", err)
	}
	out := make([]*Cluster, 0, len(list.Items))
	for _, mkc := range list.Items {
		w, err := Existing(root, mkc.Name)
		if err != nil {
			return nil, fmt.Errorf("worker %s (MultiKueueCluster %s) is no local cluster to switch: %w", mkc.Name, mkc.Name, err)
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *Cluster) int { return strings.Compare(a.Dir, b.Dir) })
	return out, nil
}

// switchOne switches this cluster alone.
func (c *Cluster) switchOne(ctx context.Context, root, to string, progress io.Writer) error {
	cfg, err := readKueueConfig(kueueConfigPath(c.Dir))
	if err != nil {
		return err
	}
	say := func(format string, args ...any) { fmt.Fprintf(progress, "switch: "+format+"\n", args...) }
	if cfg.integration() == to && (to == IntegrationOurs) == c.Running("trainjob-kueue") {
		say("the cluster already runs %s", to)
		return nil
	}
	if to == IntegrationOurs {
		return c.switchToOurs(ctx, root, cfg, say)
	}
	return c.switchToInTree(ctx, root, cfg, say)
}

func (c *Cluster) switchToOurs(ctx context.Context, root string, cfg kueueConfig, say func(string, ...any)) error {
	say("building trainjob-kueue")
	bin, err := buildOurs(ctx, root, filepath.Join(c.Dir, "bin", "trainjob-kueue"), os.Stderr)
	if err != nil {
		return err
	}
	if !c.Running("trainjob-kueue") {
		say("starting trainjob-kueue (%s), standing by while Kueue runs its built-in integration", strings.Join(ourComponents(c.state.Settings), ", "))
		if err := c.startOurs(ctx, root, bin); err != nil {
			return err
		}
	}
	say("turning Kueue's built-in TrainJob integration off and restarting Kueue")
	restarts := c.restartsOfOurs()
	cfg.setIntegration(IntegrationOurs)
	if err := cfg.write(kueueConfigPath(c.Dir)); err != nil {
		return err
	}
	if err := c.restartGracefully(ctx, "kueue"); err != nil {
		return err
	}
	say("waiting for trainjob-kueue to leave standby and take TrainJobs over")
	if err := c.modeChanged(ctx, restarts); err != nil {
		return err
	}
	c.state.Settings.Integration = IntegrationOurs
	return c.state.write(c.Dir)
}

func (c *Cluster) switchToInTree(ctx context.Context, root string, cfg kueueConfig, say func(string, ...any)) error {
	if cfg.integration() != IntegrationInTree {
		say("turning Kueue's built-in TrainJob integration on; trainjob-kueue stands by")
		restarts := c.restartsOfOurs()
		cfg.setIntegration(IntegrationInTree)
		if err := cfg.write(kueueConfigPath(c.Dir)); err != nil {
			return err
		}
		if c.Running("trainjob-kueue") {
			if err := c.modeChanged(ctx, restarts); err != nil {
				return err
			}
		}
		say("restarting Kueue with its built-in integration")
		if err := c.restartGracefully(ctx, "kueue"); err != nil {
			return err
		}
	}
	c.state.Settings.Integration = IntegrationInTree
	if err := c.state.write(c.Dir); err != nil {
		return err
	}
	carrying, err := c.carryingOurEntries(ctx)
	if err != nil {
		return err
	}
	if len(carrying) > 0 {
		// Should Kueue stop one of them, trainjob-kueue's entries must go
		// before Kueue starts it again: that is the standby's hand-back.
		say("trainjob-kueue stays standing by: unfinished TrainJobs it started still carry its entries (%s); switch to intree again once they finished or were stopped", strings.Join(carrying, ", "))
		return nil
	}
	say("stopping trainjob-kueue and removing its webhooks")
	return c.stopOurs(ctx, root)
}

// carryingOurEntries names the unfinished TrainJobs whose overrides hold
// entries trainjob-kueue injected.
func (c *Cluster) carryingOurEntries(ctx context.Context) ([]string, error) {
	admin, err := c.Client(runtime.NewScheme())
	if err != nil {
		return nil, err
	}
	jobs := &unstructured.UnstructuredList{}
	jobs.SetAPIVersion("trainer.kubeflow.org/v1alpha1")
	jobs.SetKind("TrainJobList")
	if err := admin.List(ctx, jobs); err != nil {
		return nil, fmt.Errorf("listing TrainJobs: %w", err)
	}
	var out []string
	for _, j := range jobs.Items {
		if finished(&j) {
			continue
		}
		spec, _ := j.Object["spec"].(map[string]any)
		data, _ := json.Marshal(spec)
		if strings.Contains(string(data), names.RuntimePatchManager) || strings.Contains(string(data), names.OwnedLabel) || j.GetAnnotations()[names.InjectedAnnotation] != "" {
			out = append(out, j.GetNamespace()+"/"+j.GetName())
		}
	}
	return out, nil
}

// finished: the TrainJob's Complete or Failed condition is true.
func finished(j *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(j.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if (m["type"] == "Complete" || m["type"] == "Failed") && m["status"] == "True" {
			return true
		}
	}
	return false
}

// modeChanged waits for every replica of trainjob-kueue to restart in the
// new mode on seeing Kueue's configuration change, each on its own tick,
// as its Deployment's pods do: in process (it logs "Restarting in
// process"; no exit the kubelet would count as a crash), then serving
// again.
func (c *Cluster) modeChanged(ctx context.Context, restartsBefore map[string]int) error {
	for component, before := range restartsBefore {
		pid := c.state.PIDs[component]
		if err := poll.UntilDone(ctx, time.Minute, func() error {
			if !alive(pid) {
				return poll.Stop(fmt.Errorf("%s (pid %d) exited on the configuration's change; see %s", component, pid, c.Logs(component)))
			}
			if n, _ := c.restartsOf(component); n <= before {
				return fmt.Errorf("%s (pid %d) did not restart on the configuration's change; see %s", component, pid, c.Logs(component))
			}
			return nil
		}); err != nil {
			return err
		}
		if err := c.waitServing(ctx, component); err != nil {
			return err
		}
	}
	return nil
}

// restartsOfOurs counts each running replica's restarts in process.
func (c *Cluster) restartsOfOurs() map[string]int {
	out := map[string]int{}
	for _, component := range ourComponents(c.state.Settings) {
		l, err := launcherNamed(component)
		if _, replica := l.(ours); err != nil || !replica || !c.Running(component) {
			continue
		}
		out[component], _ = c.restartsOf(component)
	}
	return out
}

// restartsOf counts a replica's restarts in process, from its log.
func (c *Cluster) restartsOf(component string) (int, error) {
	data, err := os.ReadFile(c.Logs(component))
	if err != nil {
		return 0, err
	}
	return strings.Count(string(data), `"Restarting in process"`), nil
}

// restartGracefully stops a component with SIGTERM (it releases its
// lease), starts it again as it was started and waits until it serves.
func (c *Cluster) restartGracefully(ctx context.Context, component string) error {
	stopAll(map[string]int{component: c.state.PIDs[component]}, io.Discard)
	return c.Start(ctx, component)
}

// stopOurs stops trainjob-kueue and removes its webhook configurations,
// which would otherwise refuse every TrainJob write (failurePolicy Fail).
func (c *Cluster) stopOurs(ctx context.Context, root string) error {
	admin, hooks, err := c.ourWebhooks(root)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		if err := admin.Delete(ctx, h); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("removing %s: %w", h.GetName(), err)
		}
	}
	pids := map[string]int{}
	for _, component := range ourComponents(c.state.Settings) {
		pids[component] = c.state.PIDs[component]
	}
	stopAll(pids, io.Discard)
	for component := range pids {
		delete(c.state.PIDs, component)
		if err := os.Remove(filepath.Join(c.Dir, "pids", component+".pid")); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// startOurs starts trainjob-kueue's processes (bin) on a cluster that runs
// none, and registers its webhooks.
func (c *Cluster) startOurs(ctx context.Context, root, bin string) error {
	for _, component := range ourComponents(c.state.Settings) {
		l, err := launcherNamed(component)
		if err != nil {
			return err
		}
		switch l := l.(type) {
		case ours:
			c.state.Commands[component] = command{Bin: bin, Args: l.args(c.Dir, c.state.Ports, c.state.Settings.OursReplicas)}
		case oursService:
			serviceBin, err := buildOursService(ctx, root, filepath.Join(c.Dir, "bin", component), nil)
			if err != nil {
				return err
			}
			c.state.Commands[component] = command{Bin: serviceBin, Args: l.args(c.state.Ports)}
		}
		if err := c.Start(ctx, component); err != nil {
			return err
		}
	}
	return c.registerOurWebhooks(ctx, root)
}

// registerOurWebhooks registers trainjob-kueue's webhooks on a cluster
// that started without it.
func (c *Cluster) registerOurWebhooks(ctx context.Context, root string) error {
	admin, hooks, err := c.ourWebhooks(root)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		if err := admin.Create(ctx, h); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering %s: %w", h.GetName(), err)
		}
	}
	return nil
}

// ourWebhooks are trainjob-kueue's loopback webhook configurations on this
// cluster, and an admin client to write them with.
func (c *Cluster) ourWebhooks(root string) (client.Client, []client.Object, error) {
	ca, err := os.ReadFile(filepath.Join(c.Dir, "certs", "ca.crt"))
	if err != nil {
		return nil, nil, err
	}
	hooks, err := ours{}.webhooks(root, c.state.Ports[ourWebhookPort(c.state.Settings)], ca)
	if err != nil {
		return nil, nil, err
	}
	admin, err := c.Client(admissionScheme())
	return admin, hooks, err
}

func admissionScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(admissionregistrationv1.AddToScheme(scheme))
	return scheme
}
