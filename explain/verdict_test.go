package explain_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/explain"
	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

func gpuRole(name string, pods int32, gpus string, nodeSelector map[string]string) podsets.Role {
	return podsets.Role{Name: name, Replicas: 1, PodsPerReplica: pods, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: nodeSelector,
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1"), gpu: resource.MustParse(gpus),
		}}}},
	}}}
}

// flavorQuota is one flavor of a ClusterQueue: cpu and GPU quota, an
// optional GPU borrowing limit.
type flavorQuota struct {
	name, gpus, borrowingLimit string
}

func clusterQueue(cohort string, fungibility *kueue.FlavorFungibility, flavors ...flavorQuota) *kueue.ClusterQueue {
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueue.ClusterQueueSpec{
		CohortName: kueue.CohortReference(cohort), FlavorFungibility: fungibility,
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, gpu}}},
	}}
	for _, f := range flavors {
		g := kueue.ResourceQuota{Name: gpu, NominalQuota: resource.MustParse(f.gpus)}
		if f.borrowingLimit != "" {
			g.BorrowingLimit = ptr.To(resource.MustParse(f.borrowingLimit))
		}
		cq.Spec.ResourceGroups[0].Flavors = append(cq.Spec.ResourceGroups[0].Flavors, kueue.FlavorQuotas{
			Name:      kueue.ResourceFlavorReference(f.name),
			Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("100")}, g},
		})
	}
	return cq
}

// using records what admitted workloads reserve, per flavor.
func using(cq *kueue.ClusterQueue, gpusByFlavor map[string]string) *kueue.ClusterQueue {
	for f, g := range gpusByFlavor {
		cq.Status.FlavorsReservation = append(cq.Status.FlavorsReservation, kueue.FlavorUsage{
			Name: kueue.ResourceFlavorReference(f), Resources: []kueue.ResourceUsage{{Name: gpu, Total: resource.MustParse(g)}},
		})
	}
	return cq
}

func flavors(labels map[string]map[string]string) map[string]*kueue.ResourceFlavor {
	out := map[string]*kueue.ResourceFlavor{}
	for name, l := range labels {
		out[name] = &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ResourceFlavorSpec{NodeLabels: l}}
	}
	return out
}

func queueOf(cq *kueue.ClusterQueue, members ...*kueue.ClusterQueue) *forecast.Queue {
	now, idle := forecast.CohortLends(members)
	return &forecast.Queue{ClusterQueue: cq, CohortLends: now, CohortCapacity: idle,
		Flavors: flavors(map[string]map[string]string{"a100": {"gpu": "a100"}, "h100": {"gpu": "h100"}})}
}

func TestExplainPendingJobs(t *testing.T) {
	lender := clusterQueue("research", nil, flavorQuota{name: "a100", gpus: "16"})
	busyLender := using(clusterQueue("research", nil, flavorQuota{name: "a100", gpus: "16"}), map[string]string{"a100": "12"})
	cases := map[string]struct {
		roles       []podsets.Role
		queue       *forecast.Queue
		wantVerdict []string
		// wantPicked is the flavor each role gets, "" when none.
		wantFits []forecast.Fit
	}{
		"fits in the first flavor": {
			roles:       []podsets.Role{gpuRole("node", 2, "4", nil)},
			queue:       queueOf(clusterQueue("", nil, flavorQuota{name: "a100", gpus: "16"}, flavorQuota{name: "h100", gpus: "16"})),
			wantVerdict: []string{"fits now in ClusterQueue cq (node→a100)"},
			wantFits:    []forecast.Fit{forecast.Fits},
		},
		"short in one resource": {
			roles:       []podsets.Role{gpuRole("node", 4, "8", nil)},
			queue:       queueOf(using(clusterQueue("", nil, flavorQuota{name: "a100", gpus: "32"}), map[string]string{"a100": "16"})),
			wantVerdict: []string{"short of 16 nvidia.com/gpu in flavor a100", "role node needs 32", "16 free of 32 nominal"},
			wantFits:    []forecast.Fit{forecast.NoFit},
		},
		"never fits, however long it waits": {
			roles:       []podsets.Role{gpuRole("node", 4, "8", nil)},
			queue:       queueOf(clusterQueue("", nil, flavorQuota{name: "a100", gpus: "16"})),
			wantVerdict: []string{"short of 16 nvidia.com/gpu in flavor a100", "does not fit even when the queue and its cohort are idle"},
			wantFits:    []forecast.Fit{forecast.NoFit},
		},
		"borrowing from the cohort": {
			roles:       []podsets.Role{gpuRole("node", 2, "8", nil)},
			queue:       queueOf(clusterQueue("research", nil, flavorQuota{name: "a100", gpus: "8"}), lender),
			wantVerdict: []string{"fits now by borrowing 8 nvidia.com/gpu of flavor a100 from cohort research"},
			wantFits:    []forecast.Fit{forecast.Borrows},
		},
		"borrowing capped by the borrowing limit": {
			roles:       []podsets.Role{gpuRole("node", 2, "8", nil)},
			queue:       queueOf(clusterQueue("research", nil, flavorQuota{name: "a100", gpus: "8", borrowingLimit: "4"}), lender),
			wantVerdict: []string{"short of 4 nvidia.com/gpu in flavor a100", "cohort research lends 4"},
			wantFits:    []forecast.Fit{forecast.NoFit},
		},
		"the cohort lends only what it does not use": {
			roles:       []podsets.Role{gpuRole("node", 2, "8", nil)},
			queue:       queueOf(clusterQueue("research", nil, flavorQuota{name: "a100", gpus: "8"}), busyLender),
			wantVerdict: []string{"short of 4 nvidia.com/gpu in flavor a100", "cohort research lends 4"},
			wantFits:    []forecast.Fit{forecast.NoFit},
		},
		"fungibility: the next flavor has room": {
			roles:       []podsets.Role{gpuRole("node", 2, "8", nil)},
			queue:       queueOf(using(clusterQueue("", nil, flavorQuota{name: "a100", gpus: "16"}, flavorQuota{name: "h100", gpus: "16"}), map[string]string{"a100": "16"})),
			wantVerdict: []string{"fits now in ClusterQueue cq (node→h100)"},
			wantFits:    []forecast.Fit{forecast.NoFit, forecast.Fits},
		},
		"fungibility: borrowing stops the search by default": {
			roles:       []podsets.Role{gpuRole("node", 2, "8", nil)},
			queue:       queueOf(clusterQueue("research", nil, flavorQuota{name: "a100", gpus: "8"}, flavorQuota{name: "h100", gpus: "16"}), lender),
			wantVerdict: []string{"borrowing 8 nvidia.com/gpu of flavor a100"},
			wantFits:    []forecast.Fit{forecast.Borrows},
		},
		"fungibility: whenCanBorrow TryNextFlavor prefers a flavor without borrowing": {
			roles:       []podsets.Role{gpuRole("node", 2, "8", nil)},
			queue:       queueOf(clusterQueue("research", &kueue.FlavorFungibility{WhenCanBorrow: kueue.TryNextFlavor}, flavorQuota{name: "a100", gpus: "8"}, flavorQuota{name: "h100", gpus: "16"}), lender),
			wantVerdict: []string{"fits now in ClusterQueue cq (node→h100)"},
			wantFits:    []forecast.Fit{forecast.Borrows, forecast.Fits},
		},
		"a flavor the pods can't use": {
			roles:       []podsets.Role{gpuRole("node", 2, "4", map[string]string{"gpu": "h100"})},
			queue:       queueOf(clusterQueue("", nil, flavorQuota{name: "a100", gpus: "16"}, flavorQuota{name: "h100", gpus: "4"})),
			wantVerdict: []string{"short of 4 nvidia.com/gpu in flavor h100"},
			wantFits:    []forecast.Fit{forecast.Ineligible, forecast.NoFit},
		},
		"roles of one job share the quota": {
			roles:       []podsets.Role{gpuRole("launcher", 1, "8", nil), gpuRole("node", 1, "8", nil)},
			queue:       queueOf(clusterQueue("", nil, flavorQuota{name: "a100", gpus: "8"})),
			wantVerdict: []string{"short of 8 nvidia.com/gpu in flavor a100 — role node needs 8"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ex := explain.Explain(explain.Input{Job: "ns/job", Roles: tc.roles, LocalQueue: "lq", Queue: tc.queue})
			if ex.State != lifecycle.Queued {
				t.Errorf("state %s, want Pending", ex.State)
			}
			for _, want := range tc.wantVerdict {
				if !strings.Contains(ex.Verdict, want) {
					t.Errorf("verdict %q does not say %q", ex.Verdict, want)
				}
			}
			if tc.wantFits != nil {
				var got []forecast.Fit
				for _, c := range ex.Roles[0].Candidates {
					got = append(got, c.Fit)
				}
				if diff := cmp.Diff(tc.wantFits, got); diff != "" {
					t.Errorf("candidate fits (-want +got):\n%s", diff)
				}
			}
			var out bytes.Buffer
			if err := ex.WriteText(&out); err != nil || !strings.Contains(out.String(), ex.Verdict) {
				t.Errorf("text output %q (error %v) lacks the verdict", out.String(), err)
			}
		})
	}
}

func TestExplainUncoveredResource(t *testing.T) {
	role := gpuRole("node", 1, "1", nil)
	role.Template.Spec.Containers[0].Resources.Requests["example.com/fpga"] = resource.MustParse("1")
	ex := explain.Explain(explain.Input{Job: "ns/job", Roles: []podsets.Role{role}, LocalQueue: "lq",
		Queue: queueOf(clusterQueue("", nil, flavorQuota{name: "a100", gpus: "8"}))})
	if want := "never admitted: role node requests example.com/fpga"; !strings.Contains(ex.Verdict, want) {
		t.Errorf("verdict %q, want %q", ex.Verdict, want)
	}
}

func TestExplainByWorkloadState(t *testing.T) {
	roles := []podsets.Role{gpuRole("node", 2, "4", nil)}
	q := queueOf(clusterQueue("", nil, flavorQuota{name: "a100", gpus: "16"}))
	admission := &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{
		{Name: "node", Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{gpu: "a100", corev1.ResourceCPU: "a100"}},
	}}
	cond := func(typ, status, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: msg}
	}
	cases := map[string]struct {
		queue       string
		wl          *kueue.Workload
		wantState   lifecycle.State
		wantVerdict string
	}{
		"no queue label": {wantState: lifecycle.NotQueued, wantVerdict: "no kueue.x-k8s.io/queue-name label"},
		"admitted": {queue: "lq", wl: &kueue.Workload{Status: kueue.WorkloadStatus{Admission: admission,
			Conditions: []metav1.Condition{cond(kueue.WorkloadAdmitted, "True", "Admitted", "")}}},
			wantState: lifecycle.Admitted, wantVerdict: "admitted by ClusterQueue cq: node→a100"},
		"admitted through MultiKueue": {queue: "lq", wl: &kueue.Workload{Status: kueue.WorkloadStatus{Admission: admission, ClusterName: ptr.To("worker1"),
			Conditions: []metav1.Condition{cond(kueue.WorkloadAdmitted, "True", "Admitted", "")}}},
			wantState: lifecycle.Admitted, wantVerdict: "runs on worker cluster worker1"},
		"waiting for checks": {queue: "lq", wl: &kueue.Workload{Status: kueue.WorkloadStatus{Admission: admission,
			Conditions:      []metav1.Condition{cond(kueue.WorkloadQuotaReserved, "True", "QuotaReserved", "")},
			AdmissionChecks: []kueue.AdmissionCheckState{{Name: "prov", State: kueue.CheckStatePending}}}},
			wantState: lifecycle.QuotaReserved, wantVerdict: "waiting for admission checks: prov=Pending"},
		"held by trainjob-kueue": {queue: "lq", wl: &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "wl",
			Annotations: map[string]string{names.HeldForRuntimeAnnotation: "TrainingRuntime ns/torch"}}, Spec: kueue.WorkloadSpec{Active: ptr.To(false)}},
			wantState: lifecycle.WaitingForRuntime, wantVerdict: "held out of the queue by trainjob-kueue: the job can't start from TrainingRuntime ns/torch"},
		"held for an admission policy's refusal": {queue: "lq", wl: &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "wl",
			Annotations: map[string]string{names.HeldByPolicyAnnotation: `{"policy":"require-team","since":"2026-11-27T12:00:00Z","attempt":2}`}}, Spec: kueue.WorkloadSpec{Active: ptr.To(false)}},
			wantState: lifecycle.HeldByPolicy, wantVerdict: "ValidatingAdmissionPolicy require-team refused the job's start (refusal 2, since 2026-11-27T12:00:00Z"},
		"finished with a refusal in our words": {queue: "lq", wl: &kueue.Workload{Status: kueue.WorkloadStatus{
			Conditions: []metav1.Condition{cond(kueue.WorkloadFinished, "True", "FailedToStart", "Trainer's webhook (validator.trainjob.trainer.kubeflow.org) refused the start: spec.trainer: bad")}}},
			wantState: lifecycle.Failed, wantVerdict: "failed (FailedToStart): Trainer's webhook (validator.trainjob.trainer.kubeflow.org) refused the start"},
		"deactivated by someone else": {queue: "lq", wl: &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "wl"}, Spec: kueue.WorkloadSpec{Active: ptr.To(false)}},
			wantState: lifecycle.Inactive, wantVerdict: "Workload wl has spec.active=false, set by someone other than trainjob-kueue"},
		"finished": {queue: "lq", wl: &kueue.Workload{Status: kueue.WorkloadStatus{
			Conditions: []metav1.Condition{cond(kueue.WorkloadFinished, "True", "Succeeded", "done")}}},
			wantState: lifecycle.Finished, wantVerdict: "finished (Succeeded): done"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ex := explain.Explain(explain.Input{Job: "ns/job", Roles: roles, LocalQueue: tc.queue, Queue: q, Workload: tc.wl})
			if ex.State != tc.wantState || !strings.Contains(ex.Verdict, tc.wantVerdict) {
				t.Errorf("got %s %q, want %s with %q", ex.State, ex.Verdict, tc.wantState, tc.wantVerdict)
			}
		})
	}
}
