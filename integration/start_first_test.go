package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/features"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// With waitForPodsReady, a job admitted again before the job framework
// reset the PodsReady condition of its last run (evicted after it started,
// admitted at once) starts in the reconcile that sees the admission. The
// job framework alone would write the condition (WaitForRecovery) and end
// that reconcile, and start the job a round trip later.
func TestAJobAdmittedWithItsLastRunsPodsReadyConditionStartsAtOnce(t *testing.T) {
	job := queuedJob("ns")
	c, reconcile := podsReadyWorld(t, job)
	reconcile() // the job's Workload
	wl := theWorkload(t, c)
	admit(t, c, wl)
	apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionTrue, Reason: kueue.WorkloadStarted})
	if err := c.Status().Update(t.Context(), wl); err != nil {
		t.Fatal(err)
	}

	reconcile()
	if got := stored(t, c, job); got.Suspended() {
		t.Fatal("the reconcile that saw the admission did not start the job")
	}
}

// A reconcile starts first only when it will start the job: suspended,
// run here, its Workload admitted and neither evicted nor finished.
func TestStartsNow(t *testing.T) {
	admitted := []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
	with := func(extra ...metav1.Condition) []metav1.Condition {
		return append(append([]metav1.Condition{}, admitted...), extra...)
	}
	for name, tc := range map[string]struct {
		job   func(*trainjob.TrainJob)
		conds []metav1.Condition
		none  bool
		want  bool
	}{
		"admitted, suspended":      {conds: admitted, want: true},
		"quota reserved only":      {conds: admitted[:1]},
		"no Workload yet":          {none: true},
		"running":                  {conds: admitted, job: func(j *trainjob.TrainJob) { j.Spec.Suspend = ptr.To(false) }},
		"evicted":                  {conds: with(metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue})},
		"finished":                 {conds: with(metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue})},
		"dispatched by MultiKueue": {conds: admitted, job: func(j *trainjob.TrainJob) { j.Spec.ManagedBy = ptr.To(trainjob.MultiKueueControllerName) }},
	} {
		t.Run(name, func(t *testing.T) {
			job, wl := cachedPair(t, tc.job, tc.conds, tc.none)
			if got := startsNow(job, wl); got != tc.want {
				t.Errorf("startsNow = %v, want %v", got, tc.want)
			}
		})
	}
}

// cachedPair is the job and Workload a reconcile reads from the cache
// (cached), the job edited by edit, its Workload with conds; none: no
// Workload.
func cachedPair(t *testing.T, edit func(*trainjob.TrainJob), conds []metav1.Condition, none bool) (*trainjob.TrainJob, *kueue.Workload) {
	t.Helper()
	job := queuedJob("ns")
	if edit != nil {
		edit(job)
	}
	objs := []client.Object{job}
	if !none {
		wl := ownedWorkload(job, true)
		wl.Status.Conditions = conds
		objs = append(objs, wl)
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	gotJob, gotWl, err := cached(t.Context(), c, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatal(err)
	}
	return gotJob, gotWl
}

// admit gives wl Kueue's admission to flavor "gpu" for every PodSet.
func admit(t *testing.T, c client.Client, wl *kueue.Workload) {
	t.Helper()
	adm := &kueue.Admission{ClusterQueue: "cq"}
	for _, ps := range wl.Spec.PodSets {
		adm.PodSetAssignments = append(adm.PodSetAssignments, kueue.PodSetAssignment{Name: ps.Name, Count: ptr.To(ps.Count),
			Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "gpu"}})
	}
	wl.Status.Admission = adm
	now := metav1.Now()
	wl.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: now},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: now},
	}
	if err := c.Status().Update(t.Context(), wl); err != nil {
		t.Fatal(err)
	}
}

func stored(t *testing.T, c client.Client, job *trainjob.TrainJob) *trainjob.TrainJob {
	t.Helper()
	got := &trainjob.TrainJob{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// podsReadyWorld is a reconciler with waitForPodsReady over a fake API
// server holding job, its runtime and a flavor: the client, and a
// reconcile of job that fails the test on an error.
func podsReadyWorld(t *testing.T, job *trainjob.TrainJob) (client.Client, func() ctrl.Result) {
	t.Helper()
	// The fake client's server-side apply does not merge a Workload's
	// conditions by type as an API server does: the job framework's status
	// writes go as merge patches here.
	features.SetFeatureGateDuringTest(t, features.WorkloadRequestUseMergePatch, true)
	b := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithObjects(job, torchRuntime(job.Namespace, corev1.ResourceRequirements{}), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: job.Namespace}},
			&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": "gpu"}}}).
		WithStatusSubresource(&kueue.Workload{}, &trainjob.TrainJob{})
	if err := SetupIndexes(t.Context(), fakeIndexer{b}); err != nil {
		t.Fatal(err)
	}
	c := b.Build()
	opts := Options{Shared: settings.Shared{Shape: shape.PodTemplateOverrides{}}}
	opts.WaitForPodsReady = true
	r := NewReconciler(c, c, events.NewFakeRecorder(16), opts)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}
	return c, func() ctrl.Result {
		t.Helper()
		res, err := r.Reconcile(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
}

// theWorkload is the one Workload c holds.
func theWorkload(t *testing.T, c client.Client) *kueue.Workload {
	t.Helper()
	var wls kueue.WorkloadList
	if err := c.List(t.Context(), &wls); err != nil || len(wls.Items) != 1 {
		t.Fatalf("Workloads %v (%v), want the job's", wls.Items, err)
	}
	return &wls.Items[0]
}
