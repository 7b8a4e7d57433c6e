package runtimesource

import (
	"errors"
	"strings"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/google/go-cmp/cmp"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

func TestRefOf(t *testing.T) {
	job := func(group, kind *string) *trainjob.TrainJob {
		return &trainjob.TrainJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j"},
			Spec:       trainjob.Spec{RuntimeRef: trainer.RuntimeRef{Name: "torch", APIGroup: group, Kind: kind}},
		}
	}
	cases := map[string]struct {
		job     *trainjob.TrainJob
		want    Ref
		wantErr string
	}{
		"defaults to a ClusterTrainingRuntime": {job: job(nil, nil), want: Ref{Kind: "ClusterTrainingRuntime", Name: "torch"}},
		"a TrainingRuntime lives in the job's namespace": {
			job:  job(nil, ptr.To("TrainingRuntime")),
			want: Ref{Kind: "TrainingRuntime", Namespace: "team", Name: "torch"},
		},
		"another kind":  {job: job(nil, ptr.To("Deployment")), wantErr: "only TrainingRuntime and ClusterTrainingRuntime"},
		"another group": {job: job(ptr.To("example.com"), ptr.To("TrainingRuntime")), wantErr: "example.com"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := RefOf(tc.job)
			if tc.wantErr != "" {
				var rtErr *Error
				if !errors.As(err, &rtErr) || rtErr.Reason != ReasonUnsupportedRuntime || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want an %s naming %q", err, ReasonUnsupportedRuntime, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(Ref{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// testScheme holds what the fake clients of these tests serve.
func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(trainer.AddToScheme(s))
	return s
}
