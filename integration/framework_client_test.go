package integration

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// The job framework's patch after our start asserts the resourceVersion
// and changes nothing: it is not sent. Every other patch is.
func TestFrameworkClientSendsNoPatchThatChangesNothing(t *testing.T) {
	for name, tc := range map[string]struct {
		patch client.Patch
		sent  bool
	}{
		"empty merge patch":                 {patch: client.RawPatch(types.MergePatchType, []byte(`{}`))},
		"only the resourceVersion asserted": {patch: client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"1"}}`))},
		"a label":                           {patch: client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`)), sent: true},
		"the resourceVersion and a label":   {patch: client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"1","labels":{"a":"b"}}}`)), sent: true},
		"a spec field":                      {patch: client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":true}}`)), sent: true},
		"not JSON":                          {patch: client.RawPatch(types.MergePatchType, []byte(`{`)), sent: true},
		"a JSON patch":                      {patch: client.RawPatch(types.JSONPatchType, []byte(`[]`)), sent: true},
	} {
		t.Run(name, func(t *testing.T) {
			job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"}}
			sent := false
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(job).WithInterceptorFuncs(interceptor.Funcs{
				Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
					sent = true
					return nil
				}}).Build()
			if err := (frameworkClient{c}).Patch(t.Context(), job, tc.patch); err != nil {
				t.Fatal(err)
			}
			if sent != tc.sent {
				t.Errorf("sent: %v, want %v", sent, tc.sent)
			}
		})
	}
}
