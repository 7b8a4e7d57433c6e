package workloadapi_test

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/names"
)

// What an enterprise admin puts on PodGroups: every one must carry a label
// cost-center. Both rules are scoped to namespace ns.

const costCenterRule = "every PodGroup must carry the label cost-center"

// podGroupRules are the PodGroup creates and updates of scheduling.k8s.io.
var podGroupRules = admissionregistrationv1.RuleWithOperations{
	Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
	Rule: admissionregistrationv1.Rule{APIGroups: []string{gang.WorkloadAPIGroupGVK.Group}, APIVersions: []string{"*"}, Resources: []string{"podgroups"},
		Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
}

// inNamespace selects namespace ns.
func inNamespace(ns string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
}

// podGroupPolicy is a ValidatingAdmissionPolicy, and its binding, that
// asks trainjob-kueue's PodGroups (by our label) for the label.
func podGroupPolicy(ns string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: podGroupRules}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "trainjob-kueues",
				Expression: "has(object.metadata.labels) && '" + names.OwnedLabel + "' in object.metadata.labels"}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "'cost-center' in object.metadata.labels", Message: costCenterRule}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        ns,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: inNamespace(ns)},
		},
	}
	return policy, binding
}

// denyingPodGroupWebhook serves, from this process, a validating webhook
// that refuses every PodGroup without the label, and registers it; both
// go when the test ends. It returns the configuration.
func denyingPodGroupWebhook(t *testing.T, ns string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		review := &admissionv1.AdmissionReview{}
		if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		var obj metav1.PartialObjectMetadata
		_ = json.Unmarshal(review.Request.Object.Raw, &obj)
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: obj.Labels["cost-center"] != ""}
		if !resp.Allowed {
			resp.Result = &metav1.Status{Message: costCenterRule, Code: http.StatusForbidden}
		}
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(srv.Close)
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-pod-groups-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "pod-groups.e2e.trainjob-kueue.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/validate"),
				CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})},
			Rules:                   []admissionregistrationv1.RuleWithOperations{podGroupRules},
			NamespaceSelector:       inNamespace(ns),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	fixtures.Create(t, ctx, k8s, hook)
	t.Cleanup(func() { _ = k8s.Delete(ctx, hook) })
	return hook
}
