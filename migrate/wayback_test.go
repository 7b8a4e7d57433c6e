package migrate

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// The way back, as Kueue's built-in integration will take it: a running
// job whose Workload books other pods than that integration computes from
// the live runtime is stopped (the edited runtime named); one admitted
// but not started loses its place; a queued one is corrected in place;
// equivalent PodSets keep every job as it is.
func TestJudgeWayBackDecidesAsKueuesBuiltInIntegrationWill(t *testing.T) {
	booked := []kueue.PodSet{podSet("node", 2, "4")}
	edited := []kueue.PodSet{podSet("node", 4, "4")}
	job := func(running bool) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: "u", Labels: map[string]string{constants.QueueLabel: "lq"}}}
		j.Spec.Suspend = ptr.To(!running)
		j.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
		return j
	}
	wl := func(reserved bool) *kueue.Workload {
		w := &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: booked}}
		if reserved {
			w.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
			w.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue}}
		}
		return w
	}
	for name, tc := range map[string]struct {
		j    Job
		want Decision
		says []string
	}{
		"running, its runtime as it started":            {j: Job{Job: job(true), Workload: wl(true), PodSets: booked}, want: Adopted},
		"running, its runtime edited since":             {j: Job{Job: job(true), Workload: wl(true), PodSets: edited}, want: Stopped, says: []string{"TrainingRuntime team/torch", "NoMatchingWorkload", "finished"}},
		"admitted, not started, its runtime edited":     {j: Job{Job: job(false), Workload: wl(true), PodSets: edited}, want: Recreated},
		"queued, its runtime edited":                    {j: Job{Job: job(false), Workload: wl(false), PodSets: edited}, want: CorrectedInPlace},
		"running, the built-in integration cannot tell": {j: Job{Job: job(true), Workload: wl(true), Err: errors.New("runtime 'torch' not found")}, want: Unknown, says: []string{"not found"}},
		"running, the check may not dry-run a Workload": {j: Job{Job: job(true), Workload: wl(true),
			Err: apierrors.NewForbidden(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "workloads"}, "", errors.New("no"))},
			want: Unknown, says: []string{"may create workloads.kueue.x-k8s.io in namespace team", "dry-run"}},
		"running, a webhook denied the dry run": {j: Job{Job: job(true), Workload: wl(true),
			Err: apierrors.NewForbidden(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "workloads"}, "", errors.New(`admission webhook "vworkload.kb.io" denied the request: spec.podSets: Too many`))},
			want: Unknown, says: []string{"denied the request", "it retries"}},
		"running without a reservation": {j: Job{Job: job(true), Workload: wl(false), PodSets: booked}, want: Stopped},
		"dispatched by MultiKueue: MultiKueue's to run": {j: Job{Job: func() *trainjob.TrainJob {
			j := job(true)
			j.Spec.ManagedBy = ptr.To(trainjob.MultiKueueControllerName)
			return j
		}(), Workload: wl(true)}, want: LeftAlone},
		"queued, no Workload yet": {j: Job{Job: job(false)}, want: NewWorkload},
	} {
		t.Run(name, func(t *testing.T) {
			v := JudgeWayBack(tc.j)
			if v.Decision != tc.want {
				t.Errorf("decision %q (%s), want %q", v.Decision, v.Reason, tc.want)
			}
			for _, s := range tc.says {
				if !strings.Contains(v.Reason, s) {
					t.Errorf("%q does not say %q", v.Reason, s)
				}
			}
			if v.StopsARunningJob() != (tc.want == Stopped) {
				t.Errorf("StopsARunningJob = %v", v.StopsARunningJob())
			}
		})
	}
}

// The way back is judged only on the Kueue release whose built-in
// integration this binary links (v0.19): an older one's rules differ.
func TestTheWayBackIsJudgedOnlyOnTheLinkedKueueRelease(t *testing.T) {
	for _, tc := range []struct {
		tools   string
		refused bool
	}{
		{"kueue-v0.16.2", true},
		{"kueue-v0.19.2", false},
	} {
		t.Run(tc.tools, func(t *testing.T) {
			release, err := discovery.KueueReleaseOf(fixtures.ModuleCRD(t, filepath.Join("..", "hack", "tools", tc.tools), "sigs.k8s.io/kueue", fixtures.WorkloadCRDFile))
			if err != nil {
				t.Fatal(err)
			}
			err = wayBackJudgeable(release)
			if (err != nil) != tc.refused {
				t.Fatalf("refused: %v, want %v", err, tc.refused)
			}
			if err != nil && !strings.Contains(err.Error(), "Kueue before v0.19") {
				t.Errorf("the refusal does not name the cluster's release: %v", err)
			}
		})
	}
}

// Kueue's job framework drops duplicate env vars from the PodSets it takes
// (JobPodSets, the last one kept) before it compares them with the stored
// ones: a runtime with a duplicate is no difference on the way back.
func TestTheWayBackComparesPodSetsAsKueueTakesThem(t *testing.T) {
	env := func(vars ...corev1.EnvVar) []kueue.PodSet {
		ps := podSet("node", 2, "4")
		ps.Template.Spec.Containers[0].Env = vars
		return []kueue.PodSet{ps}
	}
	stored := env(corev1.EnvVar{Name: "A", Value: "2"})
	j := Job{Job: &trainjob.TrainJob{}, Workload: &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: stored}}}
	j.Job.Namespace, j.Job.Name = "team", "j"
	j.Job.Spec.Suspend = ptr.To(true)
	j.Job.Labels = map[string]string{constants.QueueLabel: "lq"}
	j.PodSets = env(corev1.EnvVar{Name: "A", Value: "1"}, corev1.EnvVar{Name: "A", Value: "2"})
	sanitize(&j)
	if v := JudgeWayBack(j); v.Decision != Adopted {
		t.Errorf("decision %q (%s), want %q", v.Decision, v.Reason, Adopted)
	}
}
