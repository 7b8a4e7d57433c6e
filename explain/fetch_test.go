package explain

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/forecast"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Labels a user puts on a TrainJob for Kueue.
const (
	queueNameLabel        = "kueue.x-k8s.io/queue-name"
	prebuiltWorkloadLabel = "kueue.x-k8s.io/prebuilt-workload-name"
)

// schemaUnder nests leaf under path, "items" stepping into an array.
func schemaUnder(leaf apiextensionsv1.JSONSchemaProps, path ...string) apiextensionsv1.JSONSchemaProps {
	s := leaf
	for i := len(path) - 1; i >= 0; i-- {
		inner := s
		if path[i] == "items" {
			s = apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &inner}}
			continue
		}
		s = apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{path[i]: inner}}
	}
	return s
}

// trainJobCRD is the TrainJob CRD of a Trainer release: v2.2 and v2.3
// share spec.runtimePatches, and v2.3's patches' pod spec has
// terminationGracePeriodSeconds; any other release has spec fields this
// build does not support.
func trainJobCRD(release string) *apiextensionsv1.CustomResourceDefinition {
	podSpec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"nodeSelector": {Type: "object"}}}
	if release == "v2.3" {
		podSpec.Properties["terminationGracePeriodSeconds"] = apiextensionsv1.JSONSchemaProps{Type: "integer"}
	}
	spec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"runtimeRef":     {Type: "object"},
		"runtimePatches": schemaUnder(podSpec, "items", "trainingRuntimeSpec", "template", "spec", "replicatedJobs", "items", "template", "spec", "template", "spec"),
	}}
	if release != "v2.2" && release != "v2.3" {
		spec.Properties = map[string]apiextensionsv1.JSONSchemaProps{"runtimeRef": {Type: "object"}, "somethingNew": {Type: "array"}}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: discovery.TrainJobCRD},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1alpha1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
			}},
		}}},
	}
}

// torchRuntime is TrainingRuntime ml/torch: nodes trainer pods of gpus
// GPUs each.
func torchRuntime(nodes int32, gpus string) *trainer.TrainingRuntime {
	rt := &trainer.TrainingRuntime{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainingRuntimeKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "torch"},
		Spec:       trainer.TrainingRuntimeSpec{MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To(nodes)}},
	}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetapi.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Labels = map[string]string{podsets.AncestorLabel: podsets.AncestorTrainer}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{
		Name: podsets.NodeName, Image: "pytorch",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{fixtures.GPU: resource.MustParse(gpus)}},
	}}
	return rt
}

// llamaJob is TrainJob ml/llama on runtime torch, in LocalQueue team-a.
func llamaJob() *trainjob.TrainJob {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "llama", UID: "llama-uid",
		Labels: map[string]string{queueNameLabel: "team-a"}}}
	job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch", Kind: ptr.To(trainer.TrainingRuntimeKind)}
	job.Spec.Suspend = ptr.To(true) // queued: our webhook suspends it at create
	return job
}

func localQueue(clusterQueue string) *kueue.LocalQueue {
	return &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "team-a"},
		Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(clusterQueue)}}
}

// a100Queue is ClusterQueue cq-a with gpus GPUs of flavor a100.
func a100Queue(cohort, gpus string) *kueue.ClusterQueue {
	return fixtures.GPUQueue("cq-a", cohort, fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: gpus}))
}

// llamaWorkload is the name Kueue gives the Workload of llamaJob.
func llamaWorkload() string {
	return jobframework.GetWorkloadNameForOwnerWithGVK("llama", "llama-uid", trainjob.GVK)
}

// ownedByLlama is the controller reference the job framework puts on
// llamaJob's Workload.
func ownedByLlama() []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "llama", UID: "llama-uid", Controller: ptr.To(true)}}
}

func admittedWorkload(name string) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, OwnerReferences: ownedByLlama()}, Status: kueue.WorkloadStatus{
		Admission: &kueue.Admission{ClusterQueue: "cq-a", PodSetAssignments: []kueue.PodSetAssignment{
			{Name: "node", Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{fixtures.GPU: "a100"}},
		}},
		Conditions: []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted"}},
	}}
}

func waitingWorkload(name string) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, OwnerReferences: ownedByLlama()}, Status: kueue.WorkloadStatus{
		Conditions: []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending",
			Message: "couldn't assign flavors to pod set node"}},
	}}
}

// clusterScheme holds what explain reads: core objects, CRDs, Kueue's
// objects, and Trainer's as trainjob-kueue reads them (our TrainJob next to
// Trainer's runtimes).
func clusterScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(kueue.AddToScheme(s))
	utilruntime.Must(trainjob.AddToScheme(s))
	return s
}

func fakeCluster(funcs interceptor.Funcs, objs ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().WithScheme(clusterScheme()).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

// failing makes every read of an object of obj's type fail with err, and
// every other read reach the cluster.
func failing[T client.Object](err error) interceptor.Funcs {
	return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(T); ok {
			return err
		}
		return c.Get(ctx, key, obj, opts...)
	}}
}

var errEtcd = errors.New("etcd is on fire")

// On Trainer v2.3 a job is built from its snapshot of the runtime once
// Trainer took it: an edit of the runtime since changes nothing about the
// pods, so the explanation books what the snapshot says.
func TestExplainerBooksWhatTrainerBuildsTheJobFrom(t *testing.T) {
	job := llamaJob()
	// Edited after the job was created: 2 GPUs per node then, 8 now.
	live, then := torchRuntime(2, "8"), torchRuntime(2, "2")
	snapshot := fixtures.RuntimeSnapshot(t, job, then)
	manifest := job.DeepCopy()
	manifest.UID = ""
	fromSnapshot := []roleExplanation{{Name: "node", Count: 2,
		PerPod: fixtures.Requests(t, "nvidia.com/gpu", "2"), Total: fixtures.Requests(t, "nvidia.com/gpu", "4")}}
	fromLive := []roleExplanation{{Name: "node", Count: 2,
		PerPod: fixtures.Requests(t, "nvidia.com/gpu", "8"), Total: fixtures.Requests(t, "nvidia.com/gpu", "16")}}
	const snapshotNote = "Trainer's snapshot of the runtime, ConfigMap ml/llama-runtime-snapshot (the runtime as it was when the job was created)"
	forbidden := apierrors.NewForbidden(corev1.Resource("configmaps"), "llama-runtime-snapshot", errors.New("ada may not read ConfigMaps"))
	cases := map[string]struct {
		job             *trainjob.TrainJob
		trainer         string
		snapshot        bool
		funcs           interceptor.Funcs
		wantRoles       []roleExplanation
		wantRuntimeFrom string
		wantVerdict     string
	}{
		"Trainer v2.3, the snapshot taken": {
			job: job, trainer: "v2.3", snapshot: true,
			wantRoles: fromSnapshot, wantRuntimeFrom: snapshotNote,
			wantVerdict: "fits now in ClusterQueue cq-a (node→a100)",
		},
		"Trainer v2.3, no snapshot yet": {
			job: job, trainer: "v2.3",
			wantRoles:   fromLive,
			wantVerdict: "pending: short of 8 nvidia.com/gpu in flavor a100",
		},
		"Trainer v2.2 takes no snapshot": {
			job: job, trainer: "v2.2", snapshot: true,
			wantRoles:   fromLive,
			wantVerdict: "pending: short of 8 nvidia.com/gpu in flavor a100",
		},
		"a manifest not created yet has no snapshot": {
			job: manifest, trainer: "v2.3", snapshot: true,
			wantRoles:   fromLive,
			wantVerdict: "pending: short of 8 nvidia.com/gpu in flavor a100",
		},
		"a user who may not read ConfigMaps": {
			job: job, trainer: "v2.3", snapshot: true, funcs: failing[*corev1.ConfigMap](forbidden),
			wantRoles:   fromLive,
			wantVerdict: "pending: short of 8 nvidia.com/gpu in flavor a100",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := []client.Object{trainJobCRD(tc.trainer), live, localQueue("cq-a"), a100Queue("", "8"), fixtures.ResourceFlavor("a100", nil)}
			if tc.snapshot {
				objs = append(objs, snapshot)
			}
			e := &Explainer{Client: fakeCluster(tc.funcs, objs...)}
			ex, err := e.Explain(t.Context(), tc.job)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantRoles, ex.Roles, cmpopts.IgnoreFields(roleExplanation{}, "Candidates")); diff != "" {
				t.Errorf("roles (-want +got):\n%s", diff)
			}
			if ex.RuntimeFrom != tc.wantRuntimeFrom {
				t.Errorf("runtime from %q, want %q", ex.RuntimeFrom, tc.wantRuntimeFrom)
			}
			if !strings.HasPrefix(ex.Verdict, tc.wantVerdict) {
				t.Errorf("verdict %q, want it to start %q", ex.Verdict, tc.wantVerdict)
			}
		})
	}
}

// manifestNow is the clock of the explanations of manifests.
var manifestNow = time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)

func TestExplainerReadsTheJobsQueue(t *testing.T) {
	torch := torchRuntime(2, "4")
	teamB := fixtures.Reserving(fixtures.GPUQueue("cq-b", "research", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "16"})), "a100", fixtures.Requests(t, "nvidia.com/gpu", "4"))
	otherCohort := fixtures.GPUQueue("cq-c", "vision", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "64"}))
	noCohort := fixtures.GPUQueue("cq-d", "", fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "64"}))
	twoFlavors := fixtures.GPUQueue("cq-a", "",
		fixtures.FlavorQuotas("a100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "4"}),
		fixtures.FlavorQuotas("h100", fixtures.ResourceQuota{Name: fixtures.GPU, Nominal: "8"}))
	unlabelled := llamaJob()
	unlabelled.Labels = nil
	listingFails := interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		return errEtcd
	}}
	gpuQuota := func(nominal, used, cohortLends string) quotaLine {
		return quotaLine{Flavor: "a100", Resource: fixtures.GPU, Nominal: resource.MustParse(nominal), Used: resource.MustParse(used), CohortLends: resource.MustParse(cohortLends)}
	}
	cases := map[string]struct {
		job   *trainjob.TrainJob
		objs  []client.Object
		funcs interceptor.Funcs
		want  Explanation
		// wantCandidates are the flavors the node role could go to.
		wantCandidates []forecast.Candidate
	}{
		// No LocalQueue is read: the interceptor would fail it.
		"a job with no queue-name label": {
			job: unlabelled, funcs: failing[*kueue.LocalQueue](errEtcd),
			want: Explanation{State: lifecycle.NotQueued,
				Verdict: "not queued: the job has no kueue.x-k8s.io/queue-name label, so Kueue does not manage it"},
		},
		"a LocalQueue that does not exist": {
			job: llamaJob(), objs: []client.Object{a100Queue("", "8")},
			want: Explanation{LocalQueue: "team-a", State: lifecycle.Queued,
				Verdict: "waiting for LocalQueue team-a: it or its ClusterQueue does not exist"},
		},
		"a LocalQueue whose ClusterQueue does not exist": {
			job: llamaJob(), objs: []client.Object{localQueue("cq-gone"), a100Queue("", "8")},
			want: Explanation{LocalQueue: "team-a", State: lifecycle.Queued,
				Verdict: "waiting for LocalQueue team-a: it or its ClusterQueue does not exist"},
		},
		// No ClusterQueue is listed: the interceptor would fail it.
		"a ClusterQueue in no cohort": {
			job: llamaJob(), objs: []client.Object{localQueue("cq-a"), fixtures.Reserving(a100Queue("", "16"), "a100", fixtures.Requests(t, "nvidia.com/gpu", "2")), fixtures.ResourceFlavor("a100", nil), teamB},
			funcs: listingFails,
			want: Explanation{LocalQueue: "team-a", ClusterQueue: "cq-a", State: lifecycle.Queued,
				Quota: []quotaLine{gpuQuota("16", "2", "0")},
				// The forecast's lists fail too: said, and the rest stands.
				ExpectedNote: "listing Workloads in every namespace (the ClusterQueues' jobs): etcd is on fire",
				Verdict:      "fits now in ClusterQueue cq-a (node→a100); Kueue admits it when it reaches the head of the queue"},
			wantCandidates: []forecast.Candidate{{Flavor: "a100", Fit: forecast.Fits}},
		},
		"a flavor whose ResourceFlavor does not exist": {
			job: llamaJob(), objs: []client.Object{localQueue("cq-a"), twoFlavors, fixtures.ResourceFlavor("a100", nil)},
			want: Explanation{LocalQueue: "team-a", ClusterQueue: "cq-a", State: lifecycle.Queued,
				Quota: []quotaLine{gpuQuota("4", "0", "0"),
					{Flavor: "h100", Resource: fixtures.GPU, Nominal: resource.MustParse("8"), Used: resource.MustParse("0"), CohortLends: resource.MustParse("0")}},
				ExpectedStart: &forecast.ExpectedStart{Unknown: "it does not fit even once every running job has ended"},
				Verdict:       "pending: short of 4 nvidia.com/gpu in flavor a100 — role node needs 8, ClusterQueue cq-a has 4 free of 4 nominal; it does not fit even when the queue and its cohort are idle: shrink the job or raise the quota; expected to start unknown: it does not fit even once every running job has ended"},
			wantCandidates: []forecast.Candidate{
				{Flavor: "a100", Fit: forecast.NoFit, Short: fixtures.Requests(t, "nvidia.com/gpu", "4")},
				{Flavor: "h100", Fit: forecast.Ineligible, Why: "the ResourceFlavor does not exist"},
			},
		},
		// Only the other members of its own cohort lend to it.
		"a ClusterQueue in a cohort": {
			job: llamaJob(), objs: []client.Object{localQueue("cq-a"), a100Queue("research", "4"), fixtures.ResourceFlavor("a100", nil), teamB, otherCohort, noCohort},
			want: Explanation{LocalQueue: "team-a", ClusterQueue: "cq-a", Cohort: "research", State: lifecycle.Queued,
				Quota: []quotaLine{gpuQuota("4", "0", "12")},
				// A manifest is played forward as if created now.
				ExpectedStart: &forecast.ExpectedStart{At: &manifestNow, InSeconds: ptr.To[int64](0)},
				Verdict:       "fits now by borrowing 4 nvidia.com/gpu of flavor a100 from cohort research; Kueue admits it when it reaches the head of the queue; expected to start now, once Kueue admits it"},
			wantCandidates: []forecast.Candidate{{Flavor: "a100", Fit: forecast.Borrows, Borrowed: fixtures.Requests(t, "nvidia.com/gpu", "4")}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// A manifest: no Workload to read.
			tc.job.UID = ""
			e := &Explainer{Client: fakeCluster(tc.funcs, append(tc.objs, trainJobCRD("v2.2"), torch)...), Now: func() time.Time { return manifestNow }}
			ex, err := e.Explain(t.Context(), tc.job)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Job = "ml/llama"
			if diff := cmp.Diff(tc.want, ex, cmpopts.IgnoreFields(Explanation{}, "Roles")); diff != "" {
				t.Errorf("explanation (-want +got):\n%s", diff)
			}
			if len(ex.Roles) != 1 {
				t.Fatalf("roles %v, want node", ex.Roles)
			}
			if diff := cmp.Diff(tc.wantCandidates, ex.Roles[0].Candidates); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
		})
	}
}

// positionsOf answers like Kueue's visibility API, and records the
// questions.
type positionsOf struct {
	position *Position
	err      error
	asked    [][3]string
}

func (p *positionsOf) Position(_ context.Context, namespace, localQueue, workload string) (*Position, error) {
	p.asked = append(p.asked, [3]string{namespace, localQueue, workload})
	return p.position, p.err
}

func TestExplainerFindsTheJobsWorkload(t *testing.T) {
	prebuilt := llamaJob()
	prebuilt.Labels[prebuiltWorkloadLabel] = "llama-prebuilt"
	finishedPrebuilt := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "llama-prebuilt"}, Status: kueue.WorkloadStatus{
		Conditions: []metav1.Condition{{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "done"}},
	}}
	manifest := llamaJob()
	manifest.UID = ""
	cases := map[string]struct {
		job         *trainjob.TrainJob
		objs        []client.Object
		funcs       interceptor.Funcs
		wantState   lifecycle.State
		wantVerdict string
	}{
		"the Workload Kueue named after the job": {
			job: llamaJob(), objs: []client.Object{admittedWorkload(llamaWorkload())},
			wantState: lifecycle.Admitted, wantVerdict: "admitted by ClusterQueue cq-a: node→a100",
		},
		"a prebuilt Workload, named by the job": {
			job: prebuilt, objs: []client.Object{admittedWorkload(llamaWorkload()), finishedPrebuilt},
			wantState: lifecycle.Finished, wantVerdict: "finished (Succeeded): done",
		},
		"no Workload yet": {
			job:       llamaJob(),
			wantState: lifecycle.Queued, wantVerdict: "fits now in ClusterQueue cq-a",
		},
		// No Workload is read: the interceptor would fail it.
		"a manifest not created yet": {
			job: manifest, objs: []client.Object{admittedWorkload(llamaWorkload())}, funcs: failing[*kueue.Workload](errEtcd),
			wantState: lifecycle.Queued, wantVerdict: "fits now in ClusterQueue cq-a",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := append(tc.objs, trainJobCRD("v2.2"), torchRuntime(2, "4"), localQueue("cq-a"), a100Queue("", "16"), fixtures.ResourceFlavor("a100", nil))
			e := &Explainer{Client: fakeCluster(tc.funcs, objs...)}
			ex, err := e.Explain(t.Context(), tc.job)
			if err != nil {
				t.Fatal(err)
			}
			if ex.State != tc.wantState || !strings.HasPrefix(ex.Verdict, tc.wantVerdict) {
				t.Errorf("got %s %q, want %s starting %q", ex.State, ex.Verdict, tc.wantState, tc.wantVerdict)
			}
		})
	}
}

// Only a Workload waiting for quota has a place in the queue to ask for.
func TestExplainerAsksThePositionOfAPendingWorkload(t *testing.T) {
	notServed := errors.New("Kueue's visibility API is not served on this cluster")
	cases := map[string]struct {
		workload     *kueue.Workload
		positions    *positionsOf
		wantAsked    [][3]string
		wantPosition *Position
		wantNote     string
		wantVerdict  string
	}{
		"a pending Workload": {
			workload:     waitingWorkload(llamaWorkload()),
			positions:    &positionsOf{position: &Position{InLocalQueue: 3, InClusterQueue: 7}},
			wantAsked:    [][3]string{{"ml", "team-a", llamaWorkload()}},
			wantPosition: &Position{InLocalQueue: 3, InClusterQueue: 7},
			wantVerdict:  "fits now in ClusterQueue cq-a (node→a100); Kueue admits it when it reaches the head of the queue (position 3 in LocalQueue team-a)",
		},
		"a pending Workload whose position is unknown": {
			workload:    waitingWorkload(llamaWorkload()),
			positions:   &positionsOf{err: notServed},
			wantAsked:   [][3]string{{"ml", "team-a", llamaWorkload()}},
			wantNote:    "Kueue's visibility API is not served on this cluster",
			wantVerdict: "fits now in ClusterQueue cq-a (node→a100); Kueue admits it when it reaches the head of the queue",
		},
		"an admitted Workload": {
			workload:    admittedWorkload(llamaWorkload()),
			positions:   &positionsOf{position: &Position{InLocalQueue: 3, InClusterQueue: 7}},
			wantVerdict: "admitted by ClusterQueue cq-a: node→a100; starting",
		},
		"no Workload yet": {
			positions:   &positionsOf{position: &Position{InLocalQueue: 3, InClusterQueue: 7}},
			wantVerdict: "fits now in ClusterQueue cq-a (node→a100); Kueue admits it when it reaches the head of the queue",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := []client.Object{trainJobCRD("v2.2"), torchRuntime(2, "4"), localQueue("cq-a"), a100Queue("", "16"), fixtures.ResourceFlavor("a100", nil)}
			if tc.workload != nil {
				objs = append(objs, tc.workload)
			}
			e := &Explainer{Client: fakeCluster(interceptor.Funcs{}, objs...), Positions: tc.positions}
			ex, err := e.Explain(t.Context(), llamaJob())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantAsked, tc.positions.asked); diff != "" {
				t.Errorf("positions asked (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPosition, ex.Position); diff != "" {
				t.Errorf("position (-want +got):\n%s", diff)
			}
			if ex.PositionNote != tc.wantNote || ex.Verdict != tc.wantVerdict {
				t.Errorf("note %q, verdict %q; want %q, %q", ex.PositionNote, ex.Verdict, tc.wantNote, tc.wantVerdict)
			}
		})
	}
}

// Without a visibility API client the explanation goes without a position.
func TestExplainerWithoutPositions(t *testing.T) {
	c := fakeCluster(interceptor.Funcs{}, trainJobCRD("v2.2"), torchRuntime(2, "4"), localQueue("cq-a"), a100Queue("", "16"),
		fixtures.ResourceFlavor("a100", nil), waitingWorkload(llamaWorkload()))
	ex, err := (&Explainer{Client: c}).Explain(t.Context(), llamaJob())
	if err != nil {
		t.Fatal(err)
	}
	if ex.Position != nil || ex.PositionNote != "" || ex.KueueSays != "couldn't assign flavors to pod set node" {
		t.Errorf("position %v, note %q, Kueue says %q; want none, none and the Workload's message", ex.Position, ex.PositionNote, ex.KueueSays)
	}
}

// Every read that fails for another reason than a missing object fails the
// explanation, naming what could not be read: an explanation from half the
// facts would mislead.
func TestExplainerFailsOnAFailedRead(t *testing.T) {
	cluster := []client.Object{trainJobCRD("v2.3"), torchRuntime(2, "4"), localQueue("cq-a"), a100Queue("research", "16"), fixtures.ResourceFlavor("a100", nil)}
	cases := map[string]struct {
		objs    []client.Object
		funcs   interceptor.Funcs
		wantErr string
		// wantCause is the error the read failed with.
		wantCause error
		// notFound: the caller can tell an object is missing.
		notFound bool
	}{
		"reading the TrainJob CRD": {
			objs: cluster, funcs: failing[*apiextensionsv1.CustomResourceDefinition](errEtcd), wantCause: errEtcd,
			wantErr: "reading CRD trainjobs.trainer.kubeflow.org (is Kubeflow Trainer installed?): etcd is on fire",
		},
		"Trainer is not installed": {
			objs:    cluster[1:],
			wantErr: "reading CRD trainjobs.trainer.kubeflow.org (is Kubeflow Trainer installed?): ", notFound: true,
		},
		"a Trainer release this build does not support": {
			objs:    append([]client.Object{trainJobCRD("v9")}, cluster[1:]...),
			wantErr: "the installed TrainJob CRD has no override field this build supports (spec fields found: [runtimeRef somethingNew])",
		},
		"reading the runtime snapshot": {
			objs: cluster, funcs: failing[*corev1.ConfigMap](errEtcd), wantCause: errEtcd,
			wantErr: "reading the runtime snapshot of TrainJob ml/llama: etcd is on fire",
		},
		"reading the runtime": {
			objs: cluster, funcs: failing[*trainer.TrainingRuntime](errEtcd), wantCause: errEtcd,
			wantErr: "reading TrainingRuntime ml/torch: etcd is on fire",
		},
		"a runtime that does not exist": {
			objs:    append([]client.Object{cluster[0]}, cluster[2:]...),
			wantErr: "TrainingRuntime ml/torch named in spec.runtimeRef does not exist",
		},
		"a runtime Trainer can't build pods from": {
			objs:    append([]client.Object{cluster[0], &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "torch"}}}, cluster[2:]...),
			wantErr: "computing the pods of TrainJob ml/llama: ", wantCause: podsets.ErrNoReplicatedJobs,
		},
		"reading the LocalQueue": {
			objs: cluster, funcs: failing[*kueue.LocalQueue](errEtcd), wantCause: errEtcd,
			wantErr: "reading LocalQueue ml/team-a: etcd is on fire",
		},
		"reading the ClusterQueue": {
			objs: cluster, funcs: failing[*kueue.ClusterQueue](errEtcd), wantCause: errEtcd,
			wantErr: "reading ClusterQueue cq-a: etcd is on fire",
		},
		"reading a ResourceFlavor": {
			objs: cluster, funcs: failing[*kueue.ResourceFlavor](errEtcd), wantCause: errEtcd,
			wantErr: "reading ResourceFlavor a100: etcd is on fire",
		},
		"listing the cohort": {
			objs: cluster, wantCause: errEtcd,
			funcs: interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*kueue.ClusterQueueList); ok {
					return errEtcd
				}
				return c.List(ctx, list, opts...)
			}},
			wantErr: "listing the ClusterQueues of cohort research: etcd is on fire",
		},
		"reading the Workload": {
			objs: cluster, funcs: failing[*kueue.Workload](errEtcd), wantCause: errEtcd,
			wantErr: "reading Workload ml/" + llamaWorkload() + " of TrainJob ml/llama: etcd is on fire",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			positions := &positionsOf{}
			e := &Explainer{Client: fakeCluster(tc.funcs, tc.objs...), Positions: positions}
			ex, err := e.Explain(t.Context(), llamaJob())
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one starting %q", err, tc.wantErr)
			}
			if tc.wantCause != nil && !errors.Is(err, tc.wantCause) {
				t.Errorf("error %v does not wrap %v", err, tc.wantCause)
			}
			if apierrors.IsNotFound(err) != tc.notFound {
				t.Errorf("IsNotFound(%v) = %v, want %v", err, !tc.notFound, tc.notFound)
			}
			if diff := cmp.Diff(Explanation{}, ex); diff != "" {
				t.Errorf("an explanation besides the error (-want +got):\n%s", diff)
			}
		})
	}
}

// A user who may not read CRDs is explained with the Trainer API the job's
// own fields show.
func TestExplainerShape(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, discovery.TrainJobCRD, errors.New("ada may not read CRDs"))
	crdForbidden := failing[*apiextensionsv1.CustomResourceDefinition](forbidden)
	withPodSpecOverrides, withPodTemplateOverrides := llamaJob(), llamaJob()
	withPodSpecOverrides.Spec.PodSpecOverrides = []trainjob.PodSpecOverride{{TargetJobs: []trainjob.TargetJob{{Name: "node"}}}}
	withPodTemplateOverrides.Spec.PodTemplateOverrides = []trainjob.PodTemplateOverride{{TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}}}}
	cases := map[string]struct {
		job   *trainjob.TrainJob
		funcs interceptor.Funcs
		want  shape.Shape
	}{
		"the installed CRD tells": {
			job: llamaJob(),
			want: shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{
				LauncherAsNodeWorkersGetResources: true, ResourcesPerNodeMerges: true, ResourcesPerNodeNeedsMLPolicy: true, RuntimeSnapshot: true,
			}},
		},
		"CRDs forbidden, a job with spec.podSpecOverrides": {
			job: withPodSpecOverrides, funcs: crdForbidden, want: shape.PodSpecOverrides{},
		},
		"CRDs forbidden, a job with spec.podTemplateOverrides": {
			job: withPodTemplateOverrides, funcs: crdForbidden, want: shape.PodTemplateOverrides{},
		},
		// The newest release of the manager's table that writes
		// spec.runtimePatches: v2.3's rules, its snapshot among them.
		"CRDs forbidden, a job with neither": {
			job: llamaJob(), funcs: crdForbidden,
			want: shape.RuntimePatches{UnsuspendsInOnePatch: true, Release: podsets.Rules{
				LauncherAsNodeWorkersGetResources: true, ResourcesPerNodeMerges: true, ResourcesPerNodeNeedsMLPolicy: true, RuntimeSnapshot: true,
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := &Explainer{Client: fakeCluster(tc.funcs, trainJobCRD("v2.3"))}
			got, err := e.shape(t.Context(), tc.job)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("shape (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplainerGet(t *testing.T) {
	e := &Explainer{Client: fakeCluster(interceptor.Funcs{}, llamaJob())}
	job, err := e.Get(t.Context(), "ml", "llama")
	if err != nil {
		t.Fatal(err)
	}
	if job.UID != "llama-uid" || job.Spec.RuntimeRef.Name != "torch" {
		t.Errorf("got TrainJob %s/%s uid %s on %s, want ml/llama on torch", job.Namespace, job.Name, job.UID, job.Spec.RuntimeRef.Name)
	}
	_, err = e.Get(t.Context(), "ml", "gpt")
	if err == nil || !strings.HasPrefix(err.Error(), "reading TrainJob ml/gpt: ") || !apierrors.IsNotFound(err) {
		t.Errorf("error %v, want a NotFound one naming TrainJob ml/gpt", err)
	}
}
