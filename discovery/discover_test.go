package discovery

import (
	"context"
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
)

// Discover learns every fact from the installed CRDs and the Kueue
// configuration in one value, and refuses, saying what is missing, a
// cluster it can't serve; a read that fails fails it.
func TestDiscoverLearnsTheFactsOnce(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	trainJobs := fixtures.TrainerCRD(t, "v2.3.0")
	trainJobs.Name = TrainJobCRD
	workloads := pinnedWorkloadCRD(t, "")
	workloads.Name = workloadCRD
	podGroups := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: PodGroupCRD}}
	config := writeConfig(t, "manageJobsWithoutQueueName: false\nwaitForPodsReady:\n  timeout: 7m\n")
	cases := map[string]struct {
		objs    []client.Object
		readErr error
		wantErr string
		check   func(t *testing.T, f Facts)
	}{
		"Trainer v2.3, Kueue v0.19, scheduler-plugins": {
			objs: []client.Object{trainJobs, workloads, podGroups},
			check: func(t *testing.T, f Facts) {
				if _, ok := f.Shape.(shape.RuntimePatches); !ok || !f.Shape.Rules().RuntimeSnapshot {
					t.Errorf("shape %T %+v, want Trainer v2.3's runtime patches", f.Shape, f.Shape.Rules())
				}
				if f.Kueue.MaxPodSets != 18 || !f.Kueue.PodsReadyByDefault {
					t.Errorf("Kueue %+v, want v0.19's", f.Kueue)
				}
				if f.Defaulter == nil || !f.PodGroups {
					t.Errorf("defaulter %v, podGroups %v", f.Defaulter, f.PodGroups)
				}
				if !f.Settings.WaitForPodsReady || f.Settings.PodsReadyTimeouts.Timeout.Minutes() != 7 {
					t.Errorf("settings %+v, want the configuration's waitForPodsReady", f.Settings)
				}
			},
		},
		"no PodGroup CRD": {
			objs:  []client.Object{trainJobs, workloads},
			check: func(t *testing.T, f Facts) { checkNoPodGroups(t, f) },
		},
		"no Trainer":        {objs: []client.Object{workloads}, wantErr: "is Kubeflow Trainer installed?"},
		"no Kueue":          {objs: []client.Object{trainJobs}, wantErr: "is Kueue installed?"},
		"a read that fails": {objs: []client.Object{trainJobs, workloads}, readErr: errors.New("connection refused"), wantErr: "connection refused"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objs...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if tc.readErr != nil && key.Name == PodGroupCRD {
						return tc.readErr
					}
					return c.Get(ctx, key, obj, opts...)
				}}).Build()
			f, err := Discover(t.Context(), c, config, "")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, f)
		})
	}
}

func checkNoPodGroups(t *testing.T, f Facts) {
	t.Helper()
	if f.PodGroups {
		t.Error("PodGroups without the CRD")
	}
}
