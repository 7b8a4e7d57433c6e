package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestSetEditsTheManifestByPath(t *testing.T) {
	base := func() *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "llama"}}
		j.Spec.RuntimeRef = trainer.RuntimeRef{Name: "torch"}
		j.Spec.Trainer = &trainjob.Trainer{NumNodes: ptr.To[int32](1)}
		return j
	}
	for name, tc := range map[string]struct {
		sets    []string
		want    func(*trainjob.TrainJob)
		wantErr string
	}{
		"a path under spec, a number": {sets: []string{"trainer.numNodes=4"}, want: func(j *trainjob.TrainJob) { j.Spec.Trainer.NumNodes = ptr.To[int32](4) }},
		"a dot inside a key, maps made on the way": {sets: []string{`trainer.resourcesPerNode.limits.nvidia\.com/gpu=8`}, want: func(j *trainjob.TrainJob) {
			j.Spec.Trainer.ResourcesPerNode = &corev1.ResourceRequirements{Limits: map[corev1.ResourceName]resource.Quantity{"nvidia.com/gpu": resource.MustParse("8")}}
		}},
		"metadata, in order": {sets: []string{"metadata.labels.kueue\\.x-k8s\\.io/queue-name=a", "metadata.labels.kueue\\.x-k8s\\.io/queue-name=b"},
			want: func(j *trainjob.TrainJob) { j.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "b"} }},
		"no value":                  {sets: []string{"trainer.numNodes"}, wantErr: "want PATH=VALUE"},
		"under a value":             {sets: []string{"runtimeRef.name.x=1"}, wantErr: "spec.runtimeRef.name is not an object"},
		"a value of the wrong type": {sets: []string{"trainer.numNodes=two"}, wantErr: "the edited job is not a TrainJob"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := applySets(base(), tc.sets)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("applySets: %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := base()
			tc.want(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("applySets (-want +got):\n%s", diff)
			}
		})
	}
}
