package jobpatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
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

// With no fresh reader a stale copy is given up at once, as Stale, after
// one request: the caller waits for its cache to catch up instead of
// reading the job live. With one, the job is read afresh and written.
func TestAStaleCopyIsReadAfreshOnlyWithAFreshReader(t *testing.T) {
	for name, tc := range map[string]struct {
		fresh          bool
		patches, reads int
		wantStale      bool
	}{
		"no fresh reader: given up, stale":   {patches: 1, wantStale: true},
		"a fresh reader: read, then written": {fresh: true, patches: 2, reads: 1},
	} {
		t.Run(name, func(t *testing.T) {
			server := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", ResourceVersion: "2"}}
			patches, reads := 0, 0
			send := func(obj client.Object, p client.Patch) error {
				patches++
				data, _ := p.Data(obj)
				if !strings.Contains(string(data), `"value":"`+server.ResourceVersion+`"`) {
					return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", "testing value /metadata/resourceVersion failed: test failed", 0, false)
				}
				return nil
			}
			var fresh client.Reader
			if tc.fresh {
				fresh = readerFunc(func(obj client.Object) error {
					reads++
					server.DeepCopyInto(obj.(*trainjob.TrainJob))
					return nil
				})
			}
			stale := server.DeepCopy()
			stale.ResourceVersion = "1"
			ok, err := guarded(t.Context(), send, fresh, stale, func(*trainjob.TrainJob) []shape.Op {
				return []shape.Op{{Op: "add", Path: "/status/conditions/-", Value: "x"}}
			})
			if Stale(err) != tc.wantStale || ok == tc.wantStale {
				t.Errorf("guarded = %v, %v; want stale %v", ok, err, tc.wantStale)
			}
			if patches != tc.patches || reads != tc.reads {
				t.Errorf("%d patches and %d reads, want %d and %d", patches, reads, tc.patches, tc.reads)
			}
		})
	}
}

// readerFunc reads every object with get.
type readerFunc func(client.Object) error

func (f readerFunc) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return f(obj)
}

func (f readerFunc) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("no list")
}
