package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// A PodGroup of the job's gang that can't be written — another's under
// its name, a webhook or policy denying PodGroups, the job's own group in
// another form — never finishes the job's Workload: the start fails with
// an error the job framework retries (not podset's permanent one), says
// once which group, what stopped it and the fix, and leaves what stands
// under the name as it was.
func TestAPodGroupWriteIsNeverTheJobsFault(t *testing.T) {
	squat := func(f *startFixture, name string) *unstructured.Unstructured {
		pg := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"schedulingPolicy":      map[string]any{"basic": map[string]any{}},
			"schedulingConstraints": map[string]any{"topology": []any{map[string]any{"key": "rack"}}}}}}
		pg.SetGroupVersionKind(gang.WorkloadAPIGroupGVK)
		pg.SetNamespace(f.job.Namespace)
		pg.SetName(name)
		pg.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "squatter", UID: "cm-uid", Controller: ptr.To(true)}})
		return pg
	}
	denied := apierrors.NewForbidden(schema.GroupResource{Group: "scheduling.k8s.io", Resource: "podgroups"}, "j-x",
		errors.New(`admission webhook "labels.policy.example.com" denied the request: every PodGroup must carry the label cost-center`))
	for name, tc := range map[string]struct {
		setUp     func(f *startFixture, group string)
		wantEvent []string
		// kept: the squatter's group is there as it was.
		kept bool
	}{
		"a squatter's group under the name": {
			setUp:     func(f *startFixture, group string) { create(t, f.c, squat(f, group)) },
			wantEvent: []string{gang.ReasonPodGroupNotWritten, "another PodGroup already has its name", "its controller is ConfigMap squatter", "kubectl delete podgroups.scheduling.k8s.io"},
			kept:      true,
		},
		"a squatter's group with the job as its controller and a topology of its own": {
			setUp: func(f *startFixture, group string) {
				pg := squat(f, group)
				pg.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "j", UID: f.job.UID, Controller: ptr.To(true)}})
				pg.SetLabels(map[string]string{names.OwnedLabel: "true"})
				create(t, f.c, pg)
			},
			// The job's by its controller, but not as we make it: never
			// used, never deleted (pods of the job may name it).
			wantEvent: []string{gang.ReasonPodGroupNotWritten, "a PodGroup of this job's is under its name, and it sets spec.schedulingConstraints"},
			kept:      true,
		},
		"a webhook denying PodGroups": {
			setUp: func(f *startFixture, _ string) {
				f.deps.client = interceptor.NewClient(f.c.(client.WithWatch), interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if obj.GetObjectKind().GroupVersionKind().Kind == "PodGroup" {
						return denied
					}
					return c.Create(ctx, obj, opts...)
				}})
			},
			wantEvent: []string{gang.ReasonPodGroupNotWritten, "admission webhook labels.policy.example.com refused it: every PodGroup must carry the label cost-center", "Let PodGroups of field manager"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newStartFixture(t, shape.PodTemplateOverrides{}, nil, corev1.PodSpec{})
			f.deps.opts.Gangs.WorkloadAPI = true
			f.job.obs.clusterQueue = &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Annotations: map[string]string{names.GangSchedulingAnnotation: gang.WorkloadAPI}}}
			group := "j-" + admissionToken(f.job.obs.reserved())
			tc.setUp(f, group)
			err := f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos)
			if err == nil {
				t.Fatal("the job started without its PodGroup")
			}
			if errors.Is(err, podset.ErrInvalidPodSetUpdate) {
				t.Fatalf("the start failed for good (the Workload would be finished): %v", err)
			}
			if len(*f.writes) != 0 {
				t.Errorf("the job was written: %v", *f.writes)
			}
			events := drain(f.events)
			if len(tc.wantEvent) > 0 && (len(events) != 1 || !containsAll(events[0], tc.wantEvent)) {
				t.Errorf("events %v, want one saying %q", events, tc.wantEvent)
			}
			// Said once: the retry says nothing new.
			_ = f.job.RunWithPodSetsInfo(t.Context(), f.c, f.infos)
			if again := drain(f.events); len(tc.wantEvent) > 0 && len(again) != 0 {
				t.Errorf("said again on the retry: %v", again)
			}
			pg := &unstructured.Unstructured{}
			pg.SetGroupVersionKind(gang.WorkloadAPIGroupGVK)
			err = f.c.Get(t.Context(), client.ObjectKey{Namespace: f.job.Namespace, Name: group}, pg)
			if tc.kept {
				if _, has, _ := unstructured.NestedMap(pg.Object, "spec", "schedulingConstraints"); err != nil || !has {
					t.Errorf("the group under the name was touched: %v %v", err, pg.Object)
				}
			}
		})
	}
}

func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
