package webhook

import (
	"bytes"
	"context"
	"os"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/utils/ptr"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"
)

// The manifests' matchConditions, evaluated as the API server evaluates
// them (its CEL environment and matcher): each webhook of ours is called
// for the objects it may change, by what their makers set alone (owners,
// JobSet's label, a named PodGroup) and never by a label Kueue's webhook
// adds, and for no other, so a cluster's Jobs, JobSets and pods that are
// no TrainJob's are created without a round trip to us. A condition on
// Kueue's label would skip us in the API server's first round wherever
// our configuration sorts before Kueue's, and a webhook a first round
// skipped is never reinvoked (a TrainJob's Job queued twice). A pod that
// names a PodGroup is ours to see whatever else it is (a forged member).
func TestMatchConditionsSendUsOnlyWhatWeChange(t *testing.T) {
	matchers := compiledMatchers(t, "../config/webhook/manifests.yaml")
	ownedBy := func(apiVersion, kind string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "j", UID: "u", Controller: ptr.To(true)}}
	}
	queued := map[string]string{"kueue.x-k8s.io/queue-name": "default"}
	job := func(owners []metav1.OwnerReference, labels map[string]string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j-node-0", OwnerReferences: owners, Labels: labels}}
	}
	jobSet := func(owners []metav1.OwnerReference, labels map[string]string) *jobsetapi.JobSet {
		return &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", OwnerReferences: owners, Labels: labels}}
	}
	pod := func(labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j-node-0-0", Labels: labels, OwnerReferences: ownedBy("batch/v1", "Job")}}
	}
	clusterQueue := func(annotations map[string]string) *kueue.ClusterQueue {
		return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: annotations}}
	}
	byJobSet := ownedBy("jobset.x-k8s.io/v1alpha2", "JobSet")
	byTrainJob := ownedBy("trainer.kubeflow.org/v1alpha1", "TrainJob")
	jobSetPod := map[string]string{"jobset.sigs.k8s.io/jobset-name": "j"}
	kueueTook := map[string]string{"jobset.sigs.k8s.io/jobset-name": "j", "kueue.x-k8s.io/managed": "true"}

	for _, tc := range []struct {
		name     string
		webhook  string
		resource string
		op       admission.Operation
		obj, old runtime.Object
		want     bool
	}{
		{"a TrainJob's Job, queued by Kueue's default", "mjob.trainjob-kueue.dev", "jobs", admission.Create, job(byJobSet, queued), nil, true},
		{"a TrainJob's Job, not queued yet", "mjob.trainjob-kueue.dev", "jobs", admission.Create, job(byJobSet, map[string]string{"team": "a"}), nil, true},
		{"a TrainJob's Job, no labels yet", "mjob.trainjob-kueue.dev", "jobs", admission.Create, job(byJobSet, nil), nil, true},
		{"a CronJob's Job, queued", "mjob.trainjob-kueue.dev", "jobs", admission.Create, job(ownedBy("batch/v1", "CronJob"), queued), nil, false},
		{"a Job of no owner, queued", "mjob.trainjob-kueue.dev", "jobs", admission.Create, job(nil, queued), nil, false},
		{"a TrainJob's JobSet, queued by Kueue's default", "mjobset.trainjob-kueue.dev", "jobsets", admission.Create, jobSet(byTrainJob, queued), nil, true},
		{"a TrainJob's JobSet, not queued yet", "mjobset.trainjob-kueue.dev", "jobsets", admission.Create, jobSet(byTrainJob, nil), nil, true},
		{"a Deployment's JobSet, queued", "mjobset.trainjob-kueue.dev", "jobsets", admission.Create, jobSet(ownedBy("apps/v1", "Deployment"), queued), nil, false},
		{"a JobSet of its own, queued", "mjobset.trainjob-kueue.dev", "jobsets", admission.Create, jobSet(nil, queued), nil, false},
		{"a JobSet's pod Kueue's pod webhook took", "mpod.trainjob-kueue.dev", "pods", admission.Create, pod(kueueTook), nil, true},
		{"a JobSet's pod, not taken yet", "mpod.trainjob-kueue.dev", "pods", admission.Create, pod(jobSetPod), nil, true},
		{"a bare pod naming a PodGroup", "mpod.trainjob-kueue.dev", "pods", admission.Create, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "p"},
			Spec: corev1.PodSpec{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To("victim-184174")}}}, nil, true},
		{"a bare pod", "mpod.trainjob-kueue.dev", "pods", admission.Create, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "p"}}, nil, false},
		{"a pod of no JobSet, taken", "mpod.trainjob-kueue.dev", "pods", admission.Create, pod(map[string]string{"kueue.x-k8s.io/managed": "true"}), nil, false},
		{"a bare pod labelled as a JobSet's, taken", "mpod.trainjob-kueue.dev", "pods", admission.Create, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "p", Labels: kueueTook}}, nil, false},
		{"a ClusterQueue created", "vclusterqueue.trainjob-kueue.dev", "clusterqueues", admission.Create, clusterQueue(nil), nil, true},
		{"a ClusterQueue's annotations changed", "vclusterqueue.trainjob-kueue.dev", "clusterqueues", admission.Update, clusterQueue(map[string]string{"a": "2"}), clusterQueue(map[string]string{"a": "1"}), true},
		{"a ClusterQueue's annotations added", "vclusterqueue.trainjob-kueue.dev", "clusterqueues", admission.Update, clusterQueue(map[string]string{"a": "1"}), clusterQueue(nil), true},
		{"a ClusterQueue updated, its annotations as they were", "vclusterqueue.trainjob-kueue.dev", "clusterqueues", admission.Update, clusterQueue(map[string]string{"a": "1"}), clusterQueue(map[string]string{"a": "1"}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := matchers[tc.webhook]
			if !ok {
				t.Fatalf("no webhook %s in the manifests", tc.webhook)
			}
			obj := tc.obj.(metav1.Object)
			attrs := admission.NewAttributesRecord(tc.obj, tc.old, schema.GroupVersionKind{}, obj.GetNamespace(), obj.GetName(),
				schema.GroupVersionResource{Resource: tc.resource}, "", tc.op, nil, false, nil)
			got := m.Match(context.Background(), &admission.VersionedAttributes{Attributes: attrs, VersionedObject: tc.obj, VersionedOldObject: tc.old}, nil, nil)
			if got.Error != nil {
				t.Fatalf("evaluating %s's matchConditions: %v", tc.webhook, got.Error)
			}
			if got.Matches != tc.want {
				t.Errorf("%s called: %v, want %v (condition that failed: %q)", tc.webhook, got.Matches, tc.want, got.FailedConditionName)
			}
		})
	}
}

// compiledMatchers reads the webhook configurations of path and compiles
// each webhook's matchConditions with the API server's own compiler.
func compiledMatchers(t *testing.T, path string) map[string]matchconditions.Matcher {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	compiler := plugincel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	out := map[string]matchconditions.Matcher{}
	add := func(name string, conds []admissionregistrationv1.MatchCondition, policy *admissionregistrationv1.FailurePolicyType, kind string) {
		exprs := make([]plugincel.ExpressionAccessor, len(conds))
		for i, c := range conds {
			exprs[i] = &matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression}
		}
		filter := compiler.CompileCondition(exprs, plugincel.OptionalVariableDeclarations{HasAuthorizer: true}, environment.StoredExpressions)
		if errs := filter.CompilationErrors(); len(errs) > 0 {
			t.Fatalf("%s: matchConditions do not compile: %v", name, errs)
		}
		out[name] = matchconditions.NewMatcher(filter, policy, "webhook", kind, name)
	}
	for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &c); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.Webhooks {
				add(w.Name, w.MatchConditions, w.FailurePolicy, "admit")
			}
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &c); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.Webhooks {
				add(w.Name, w.MatchConditions, w.FailurePolicy, "validating")
			}
		}
	}
	return out
}
