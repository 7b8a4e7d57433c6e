package dra_test

import (
	"fmt"

	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/localcluster"
	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
	"github.com/trainjob-kueue/trainjob-kueue/overview"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

const quotaResource = fixtures.DRAQuota

// queueOf is a namespace whose ClusterQueue has gpus of example.com/gpu
// (the fake driver's devices, as Kueue counts them) over two kwok nodes of
// 4 devices each, and the ResourceClaimTemplate "two-gpus" (2 devices of
// the class gpu.example.com).
func queueOf(t *testing.T, gpus int64) string {
	t.Helper()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "dra-"}}
	fixtures.Create(t, ctx, k8s, nsObj)
	ns := nsObj.Name
	pool := fixtures.Pool{Name: "gpu", Labels: map[string]string{"e2e.trainjob-kueue.dev/pool": ns}, GPUs: 0}
	for i := range 2 {
		if err := localcluster.AddNode(ctx, k8s, fixtures.Node(fmt.Sprintf("%s-%d", ns, i), pool, 4)); err != nil {
			t.Fatal(err)
		}
	}
	flavors, cq, lq := fixtures.Queue(ns, ns, pool)
	fixtures.SetDRAQuota(cq, gpus)
	for _, f := range flavors {
		fixtures.Create(t, ctx, k8s, f)
	}
	fixtures.Create(t, ctx, k8s, cq, lq, fixtures.ClaimTemplate(ns, "two-gpus", localcluster.DRADeviceClass, 2))
	return ns
}

// draRuntime is a torch runtime of nodes trainer nodes whose pods claim
// through claim (a PodResourceClaim), for an hour.
func draRuntime(ns, name string, nodes int32, claim corev1.PodResourceClaim) *trainer.TrainingRuntime {
	return fixtures.WithClaim(fixtures.TrainingRuntime(ns, name, fixtures.TorchPolicy(nodes),
		fixtures.Role{Name: "node", Ancestor: "trainer", Requests: fixtures.CPUs("1"), Annotations: fixtures.RunFor(time.Hour)}), claim)
}

// A job of 2 nodes × 2 DRA GPUs books 4 example.com/gpu: it is admitted
// against that quota, its pods run with their claims allocated from the
// fake driver's devices; a second one waits for the quota, holding none.
func TestDRAGPUsAreCountedAgainstQuotaAndAllocated(t *testing.T) {
	ns := queueOf(t, 4)
	fixtures.Create(t, ctx, k8s, draRuntime(ns, "dra", 2, fixtures.FromTemplate("two-gpus")))
	first, second := fixtures.TrainJob(ns, "first", "dra", "lq"), fixtures.TrainJob(ns, "second", "dra", "lq")
	fixtures.Create(t, ctx, k8s, first)
	fixtures.WaitRunning(t, ctx, k8s, first)
	wl := fixtures.WaitWorkload(t, ctx, k8s, first)
	usage := wl.Status.Admission.PodSetAssignments[0].ResourceUsage[quotaResource]
	if usage.Value() != 4 {
		t.Errorf("Kueue booked %s %s for 2 pods × 2 devices, want 4 (%v)", usage.String(), quotaResource, wl.Status.Admission.PodSetAssignments[0].ResourceUsage)
	}
	pods, err := fixtures.PodsOf(ctx, k8s, first, "node")
	if err != nil {
		t.Fatal(err)
	}
	var claims resourcev1.ResourceClaimList
	if err := k8s.List(ctx, &claims, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	allocated := 0
	for _, c := range claims.Items {
		if a := c.Status.Allocation; a != nil && len(a.Devices.Results) == 2 && a.Devices.Results[0].Driver == localcluster.DRADeviceClass {
			allocated++
		}
	}
	if len(pods) != 2 || allocated != 2 {
		t.Errorf("%d pods, %d claims allocated 2 devices each; want 2 and 2", len(pods), allocated)
	}

	// explain and list count the devices as Kueue does, with the types
	// the plugin reads.
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(kueue.AddToScheme(scheme))
	utilruntime.Must(trainjob.AddToScheme(scheme))
	reader, err := cluster.Client(scheme)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := (&explain.Explainer{Client: reader}).Explain(ctx, fixtures.Ours(first))
	if err != nil {
		t.Fatal(err)
	}
	want := []explain.DRADevices{{Class: localcluster.DRADeviceClass, PerPod: 2, Total: 4, CountedAs: quotaResource}}
	if diff := cmp.Diff(want, ex.Roles[0].DRA); diff != "" {
		t.Errorf("explain's DRA devices (-want +got):\n%s", diff)
	}
	in, _, err := overview.Fetch(ctx, reader, nil, overview.Options{Namespace: ns}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if rows := overview.Rows(in); len(rows) != 1 || rows[0].GPUs != 4 {
		t.Errorf("list: %+v, want first with 4 GPUs", rows)
	}

	fixtures.Create(t, ctx, k8s, second)
	poll.Eventually(t, time.Minute, "the second job waiting for example.com/gpu", func() error {
		wl, err := fixtures.WorkloadOf(ctx, k8s, second)
		if err != nil || wl == nil {
			return fmt.Errorf("no Workload yet (%v)", err)
		}
		if workload.HasQuotaReservation(wl) {
			t.Fatalf("the second job got quota beyond the 4 example.com/gpu: %v", wl.Status.Conditions)
		}
		c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		if c == nil || !strings.Contains(c.Message, string(quotaResource)) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
}

// Bad input holds no quota and is said: a template that does not exist
// and a device class Kueue's Configuration does not map (Kueue's words,
// on the Workload), a shared claim (ours: Kueue would not count it).
func TestBadDRAClaimsHoldNoQuotaAndAreSaid(t *testing.T) {
	ns := queueOf(t, 8)
	fixtures.Create(t, ctx, k8s, fixtures.ClaimTemplate(ns, "other-class", "other.example.com", 1),
		draRuntime(ns, "missing", 1, fixtures.FromTemplate("no-such-template")),
		draRuntime(ns, "unmapped", 1, fixtures.FromTemplate("other-class")),
		draRuntime(ns, "shared", 1, corev1.PodResourceClaim{Name: "gpus", ResourceClaimName: ptr.To("team-gpus")}))
	for _, tc := range []struct{ runtime, says string }{
		{"missing", "no-such-template"},
		{"unmapped", "DeviceClass other.example.com is not mapped"},
	} {
		tj := fixtures.TrainJob(ns, tc.runtime, tc.runtime, "lq")
		fixtures.Create(t, ctx, k8s, tj)
		poll.Eventually(t, time.Minute, tc.runtime+": Kueue's word on the Workload", func() error {
			wl, err := fixtures.WorkloadOf(ctx, k8s, tj)
			if err != nil || wl == nil {
				return fmt.Errorf("no Workload yet (%v)", err)
			}
			if workload.HasQuotaReservation(wl) {
				t.Fatalf("%s: quota reserved: %v", tc.runtime, wl.Status.Conditions)
			}
			c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
			if c == nil || !strings.Contains(c.Message, tc.says) {
				return fmt.Errorf("conditions %v", wl.Status.Conditions)
			}
			return nil
		})
	}
	// A shared claim: refused when the job is created, the fix named.
	shared := fixtures.TrainJob(ns, "shared", "shared", "lq")
	if err := k8s.Create(ctx, shared); err == nil || !strings.Contains(err.Error(), "resourceClaimTemplateName") {
		t.Errorf("a job whose runtime shares a claim: created with %v, want refused naming resourceClaimTemplateName", err)
	}
	cq := &kueue.ClusterQueue{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: ns}, cq); err != nil {
		t.Fatal(err)
	}
	if cq.Status.ReservingWorkloads != 0 {
		t.Errorf("%d Workloads reserve quota", cq.Status.ReservingWorkloads)
	}
}
