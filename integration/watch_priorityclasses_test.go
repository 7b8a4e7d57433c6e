package integration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A WorkloadPriorityClass created brings the jobs whose label names it,
// and no other.
func TestAPriorityClassCreatedBringsTheJobsThatNameIt(t *testing.T) {
	job := func(name, class string) *trainjob.TrainJob {
		return &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{constants.WorkloadPriorityClassLabel: class}}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(job("a", "high"), job("b", "low")).Build()
	r := &Reconciler{deps: &deps{client: c}}
	var got []string
	for _, req := range r.jobsOfPriorityClass(t.Context(), &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}}) {
		got = append(got, req.String())
	}
	if diff := cmp.Diff([]string{"ns/a"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
