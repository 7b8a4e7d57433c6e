package jobpatch_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainjob-kueue/trainjob-kueue/jobpatch"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A start writes exactly its operations, guarded by the resourceVersion
// they were rendered from; a second call with nothing left to do sends no
// request.
func ExampleGuarded() {
	ctx := context.Background()
	stored := &trainjob.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "llm", Labels: map[string]string{"team": "a"}},
		Spec:       trainjob.Spec{Suspend: ptr.To(true)},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(stored).Build()
	job := &trainjob.TrainJob{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(stored), job); err != nil {
		panic(err)
	}
	unsuspend := func(j *trainjob.TrainJob) []shape.Op {
		if !ptr.Deref(j.Spec.Suspend, false) {
			return nil // nothing left to do: no request
		}
		return []shape.Op{{Op: "replace", Path: "/spec/suspend", Value: false}}
	}
	for range 2 {
		sent, err := jobpatch.Guarded(ctx, c, c, job, unsuspend)
		fmt.Printf("sent %v, err %v, suspend %v, labels %v\n", sent, err, *job.Spec.Suspend, job.Labels)
	}
	// Output:
	// sent true, err <nil>, suspend false, labels map[team:a]
	// sent false, err <nil>, suspend false, labels map[team:a]
}
