package jobpatch

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The answers below are built the way kube-apiserver builds them
// (k8s.io/apiserver's patch handler, webhook and policy dispatchers).
func TestStaleOrRefused(t *testing.T) {
	trainjobs := schema.GroupResource{Group: "trainer.kubeflow.org", Resource: "trainjobs"}
	kind := schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "TrainJob"}
	webhookDenied := func(code int32, reason metav1.StatusReason) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason,
			Message: `admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: spec.runtimePatches: too many`}}
	}
	cases := map[string]struct {
		err            error
		stale, refused bool
	}{
		"failed test of resourceVersion": {
			err:   apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", "testing value /metadata/resourceVersion failed: test failed", 0, false),
			stale: true,
		},
		"conflict": {
			err:   apierrors.NewConflict(trainjobs, "job", errors.New("the object has been modified")),
			stale: true,
		},
		"validation: too many runtimePatches": {
			err:     apierrors.NewInvalid(kind, "job", field.ErrorList{field.TooMany(field.NewPath("spec", "runtimePatches"), 17, 16)}),
			refused: true,
		},
		"webhook denial, 403": {
			err:     webhookDenied(http.StatusForbidden, metav1.StatusReasonForbidden),
			refused: true,
		},
		"webhook denial, bare 422": {
			err:     webhookDenied(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid),
			refused: true,
		},
		"admission policy denial": {
			err: &apierrors.StatusError{ErrStatus: metav1.Status{Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
				Message: "trainjobs.trainer.kubeflow.org \"job\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no",
				Details: &metav1.StatusDetails{Kind: "trainjobs", Causes: []metav1.StatusCause{{Message: "denied request: no"}}}}},
			refused: true,
		},
		"RBAC: the admin's to mend, retried": {
			err: apierrors.NewForbidden(trainjobs, "job", errors.New(`User "system:serviceaccount:x:y" cannot patch resource "trainjobs"`)),
		},
		"server unavailable": {
			err: apierrors.NewServiceUnavailable("etcd leader changed"),
		},
		"not an API error": {
			err: errors.New("connection refused"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			wrapped := fmt.Errorf("patching TrainJob ns/job: %w", tc.err)
			if got := Stale(wrapped); got != tc.stale {
				t.Errorf("stale = %v, want %v", got, tc.stale)
			}
			if got := Refused(wrapped); got != tc.refused {
				t.Errorf("refused = %v, want %v", got, tc.refused)
			}
		})
	}
}
