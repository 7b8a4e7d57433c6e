// Command refusals records, on a live cluster, how the API server refuses
// the write that starts a TrainJob, for integration/testdata/refusals: the
// refusal classification (integration/startrefusal.go) is tested on these
// exact bodies, one set per Trainer release, so a release that words or
// frames its refusal differently shows up as a failing test, not as a job
// finished that should have been held.
//
//	go run ./hack/refusals -kubeconfig .cluster/local/kubeconfig -release trainer-v2.1.0
//
// It makes a namespace of its own, a job outside every queue, and deletes
// the namespace afterwards. Recorded: the start refused for a missing
// TrainingRuntime and ClusterTrainingRuntime (Trainer's webhook), for an
// immutable field (the API server's validation) and by a
// ValidatingAdmissionPolicy.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
)

func main() {
	// -kubeconfig (or KUBECONFIG): controller-runtime's flag.
	release := flag.String("release", "", "the installed Trainer release, prefix of the files written (trainer-v2.1.0)")
	out := flag.String("out", "integration/testdata/refusals", "where the bodies go")
	flag.Parse()
	if *release == "" {
		fmt.Fprintln(os.Stderr, "refusals: -release is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg, err := config.GetConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "refusals: %v\n", err)
		os.Exit(1)
	}
	if err := run(ctx, cfg, *release, *out); err != nil {
		fmt.Fprintf(os.Stderr, "refusals: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg *rest.Config, release, out string) error {
	c, err := client.New(cfg, client.Options{Scheme: fixtures.Scheme()})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "refusals-"}}
	if err := c.Create(ctx, ns); err != nil {
		return err
	}
	defer c.Delete(context.Background(), ns) //nolint:errcheck // best effort
	record := func(name string, err error) error {
		var status apierrors.APIStatus
		if !errors.As(err, &status) {
			return fmt.Errorf("%s: want the API server's refusal, got %v", name, err)
		}
		data, merr := json.MarshalIndent(status.Status(), "", "  ")
		if merr != nil {
			return merr
		}
		path := filepath.Join(out, release+"-"+name+".json")
		fmt.Println(path)
		return os.WriteFile(path, append(data, '\n'), 0o644)
	}
	runtimes, jobs, err := suspendedJobs(ctx, c, ns.Name)
	if err != nil {
		return err
	}
	// The API server's own validation: runtimeRef is immutable.
	moved := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"runtimeRef":{"name":"elsewhere"}}}`))
	if err := record("immutable-field", c.Patch(ctx, jobs["rt"].DeepCopy(), moved)); err != nil {
		return err
	}
	if err := policyRefusal(ctx, c, ns.Name, jobs["rt"], record); err != nil {
		return err
	}
	return missingRuntimeRefusals(ctx, c, runtimes, jobs, record)
}

// unsuspend is a job's start, as a merge patch.
func unsuspend() client.Patch {
	return client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":false}}`))
}

// suspendedJobs creates a TrainingRuntime and a ClusterTrainingRuntime,
// each named by one suspended job outside every queue ("rt", "crt"), and
// waits for Trainer's first reconcile of them (on v2.3 its runtime
// snapshot).
func suspendedJobs(ctx context.Context, c client.Client, ns string) (map[string]client.Object, map[string]*trainer.TrainJob, error) {
	role := fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1")}
	rt := fixtures.TrainingRuntime(ns, "rt", fixtures.TorchPolicy(1), role)
	crt := &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: rt.Spec}
	if err := c.Create(ctx, rt); err != nil {
		return nil, nil, err
	}
	if err := c.Create(ctx, crt); err != nil {
		return nil, nil, err
	}
	jobs := map[string]*trainer.TrainJob{}
	for name, ref := range map[string]trainer.RuntimeRef{
		"rt":  {Name: rt.Name, Kind: ptr.To(trainer.TrainingRuntimeKind), APIGroup: ptr.To(trainer.GroupVersion.Group)},
		"crt": {Name: crt.Name, Kind: ptr.To(trainer.ClusterTrainingRuntimeKind), APIGroup: ptr.To(trainer.GroupVersion.Group)},
	} {
		tj := fixtures.TrainJob(ns, name, "", "")
		delete(tj.Labels, fixtures.QueueLabel)
		tj.Spec.RuntimeRef = ref
		tj.Spec.Suspend = ptr.To(true)
		if err := retry(ctx, func() error { return c.Create(ctx, tj) }); err != nil {
			return nil, nil, fmt.Errorf("creating TrainJob %s: %w", name, err)
		}
		jobs[name] = tj
	}
	time.Sleep(5 * time.Second)
	return map[string]client.Object{"rt": rt, "crt": crt}, jobs, nil
}

// policyRefusal records a ValidatingAdmissionPolicy's refusal of a
// job's start in namespace ns, then takes the policy out of force and
// sees the start go through (a dry run).
func policyRefusal(ctx context.Context, c client.Client, ns string, job *trainer.TrainJob, record func(string, error) error) error {
	policy, binding := fixtures.UpdatePolicy(ns,
		admissionregistrationv1.Validation{Expression: `object.spec.?suspend.orValue(false) == true`, Message: "TrainJobs in this namespace may not start"})
	if err := c.Create(ctx, policy); err != nil {
		return err
	}
	defer c.Delete(context.Background(), policy) //nolint:errcheck // best effort
	if err := c.Create(ctx, binding); err != nil {
		return err
	}
	defer c.Delete(context.Background(), binding) //nolint:errcheck // best effort
	var refusal error
	if err := retry(ctx, func() error {
		refusal = c.Patch(ctx, job.DeepCopy(), unsuspend(), client.DryRunAll)
		if refusal == nil {
			return errors.New("the policy is not in force yet")
		}
		return nil
	}); err != nil {
		return err
	}
	if err := record("policy", refusal); err != nil {
		return err
	}
	if err := c.Delete(ctx, binding); err != nil {
		return err
	}
	return retry(ctx, func() error {
		return c.Patch(ctx, job.DeepCopy(), unsuspend(), client.DryRunAll)
	})
}

// missingRuntimeRefusals force-deletes each runtime (Trainer's finalizer
// removed) and records the refusal of its job's start.
func missingRuntimeRefusals(ctx context.Context, c client.Client, runtimes map[string]client.Object, jobs map[string]*trainer.TrainJob, record func(string, error) error) error {
	for name, obj := range runtimes {
		if err := fixtures.ForceDelete(ctx, c, obj); err != nil {
			return err
		}
		var refusal error
		// Trainer's webhook reads runtimes through its cache.
		if err := retry(ctx, func() error {
			refusal = c.Patch(ctx, jobs[name].DeepCopy(), unsuspend(), client.DryRunAll)
			if refusal == nil {
				return errors.New("not refused yet")
			}
			return nil
		}); err != nil {
			return err
		}
		file := map[string]string{"rt": "trainingruntime-missing", "crt": "clustertrainingruntime-missing"}[name]
		if err := record(file, refusal); err != nil {
			return err
		}
	}
	return nil
}

func retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
