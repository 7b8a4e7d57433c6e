package explain

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestDryRunAsksAdmissionAndCreatesNothing(t *testing.T) {
	trainjobs := schema.GroupResource{Group: "trainer.kubeflow.org", Resource: "trainjobs"}
	for name, tc := range map[string]struct {
		answer    error
		wantErr   error
		wantNote  string
		wantLabel string
	}{
		// The webhooks' changes come back; nothing is stored.
		"accepted": {wantLabel: "mutated"},
		"refused by a webhook": {answer: apierrors.NewForbidden(trainjobs, "llama", errors.New(`admission webhook "vtrainjob.kb.io" denied the request: spec.trainer.numNodes: must be at most 8`)),
			wantErr: ErrRefused},
		"refused by the schema": {answer: apierrors.NewInvalid(trainjob.GVK.GroupKind(), "llama", nil), wantErr: ErrRefused},
		"not allowed to create": {answer: apierrors.NewForbidden(trainjobs, "llama", errors.New(`User "ana" cannot create resource "trainjobs" in API group "trainer.kubeflow.org" in the namespace "ml"`)),
			wantNote: "not dry-run"},
	} {
		t.Run(name, func(t *testing.T) {
			c := fakeCluster(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				o := &client.CreateOptions{}
				o.ApplyOptions(opts)
				if len(o.DryRun) != 1 || o.DryRun[0] != "All" {
					t.Fatalf("create options %+v: not a dry run", o)
				}
				if tc.answer != nil {
					return tc.answer
				}
				obj.SetUID("generated")
				obj.SetLabels(map[string]string{"by": "mutated"})
				return nil
			}})
			job := llamaJob()
			job.UID = ""
			got, note, err := DryRun(context.Background(), c, job)
			if !errors.Is(err, tc.wantErr) || !strings.Contains(note, tc.wantNote) {
				t.Fatalf("DryRun: note %q, err %v; want note %q, err %v", note, err, tc.wantNote, tc.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "llama") {
					t.Errorf("the refusal %q does not carry the API server's words", err)
				}
				return
			}
			if got.UID != "" || (tc.wantLabel != "" && got.Labels["by"] != tc.wantLabel) {
				t.Errorf("DryRun gave UID %q labels %v; want no UID, the webhooks' labels", got.UID, got.Labels)
			}
		})
	}
}
