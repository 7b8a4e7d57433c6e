package integration_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
)

// "When would it start?" of a job not created, against the real Kueue,
// Trainer and our webhooks: a dry run of the create (nothing is stored),
// then the job as it would be stored explained and played forward — now
// when it fits, at the running job's end when it waits for it, never (the
// quota named) when it can't fit, and the API server's own words when it
// would be refused.
func TestPlanSaysWhenAJobWouldStartWithoutCreatingIt(t *testing.T) {
	ns := newNamespace(t)
	lq := queue(t, ns, pool{Name: "gpu", Labels: map[string]string{"pool": "gpu"}, GPUs: 8})
	create(t, trainingRuntime(ns, "rt", torchPolicy(1), role{Name: "node", Ancestor: "trainer", Requests: gpus(8)}))
	c, err := client.New(restCfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	e := &explain.Explainer{Client: c}
	plan := func(job *trainer.TrainJob) (explain.Explanation, error) {
		t.Helper()
		stored, _, err := explain.DryRun(ctx, c, fixtures.Ours(job))
		if err != nil {
			return explain.Explanation{}, err
		}
		if stored.Spec.Suspend == nil || !*stored.Spec.Suspend {
			t.Errorf("the dry run's job is not suspended: admission's changes are not what is explained")
		}
		return e.Explain(ctx, stored)
	}

	fits, err := plan(trainJob(ns, "would-fit", "rt", lq))
	if err != nil {
		t.Fatal(err)
	}
	if s := fits.ExpectedStart; s == nil || s.At == nil || s.At.Sub(time.Now()).Abs() > time.Minute || !strings.HasPrefix(fits.Verdict, "fits now") {
		t.Errorf("a job that fits: expected start %+v, verdict %q; want now, fits now", s, fits.Verdict)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "would-fit"}, &trainer.TrainJob{}); !notFound(err) {
		t.Errorf("the plan created the job (get: %v)", err)
	}

	// A job of the whole quota, ending at its maximum execution time.
	running := trainJob(ns, "running", "rt", lq)
	running.Labels[constants.MaxExecTimeSecondsLabel] = "3600"
	create(t, running)
	var admittedAt time.Time
	eventually(t, "the running job admitted", func() error {
		wl := fixtures.WaitWorkload(t, ctx, k8s, running)
		c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
		if c == nil || c.Status != "True" || ptr.Deref(wl.Spec.MaximumExecutionTimeSeconds, 0) != 3600 {
			return fmt.Errorf("Workload %s: admitted %v, maximum execution time %v", wl.Name, c, wl.Spec.MaximumExecutionTimeSeconds)
		}
		admittedAt = c.LastTransitionTime.Time
		return nil
	})
	waits, err := plan(trainJob(ns, "would-wait", "rt", lq))
	if err != nil {
		t.Fatal(err)
	}
	if s := waits.ExpectedStart; s == nil || s.At == nil || !s.At.Equal(admittedAt.Add(time.Hour)) || len(s.After) != 1 || s.After[0].Job != ns+"/running" {
		t.Errorf("a job that waits: expected start %+v; want at %v, after %s/running", s, admittedAt.Add(time.Hour), ns)
	}

	twoNodes := trainJob(ns, "never", "rt", lq)
	twoNodes.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
	never, err := plan(twoNodes)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(never.Verdict, "16") || !strings.Contains(never.Verdict, "raise the quota") || never.ExpectedStart == nil || never.ExpectedStart.At != nil {
		t.Errorf("a job that never fits: verdict %q, expected start %+v; want the quota named and no time", never.Verdict, never.ExpectedStart)
	}

	// Trainer's webhook refuses a job whose runtime does not exist.
	_, err = plan(trainJob(ns, "no-runtime", "missing-runtime", lq))
	if !errors.Is(err, explain.ErrRefused) || !strings.Contains(err.Error(), "missing-runtime") {
		t.Errorf("a job the API server refuses: %v; want ErrRefused with its words", err)
	}
}
