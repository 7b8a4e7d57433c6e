package webhook

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A Job's pods after its first are proven without reading the Job and its
// JobSet again (a 1,000-pod gang is one Job's); the TrainJob is read at
// every pod by its UID, so one made again under the name proves nothing
// for the older job's pods.
func TestAJobProvenOnceProvesItsNextPodsWithoutReads(t *testing.T) {
	f := newFamily()
	live := 0
	server := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(f.objects()...).Build()
	counted := interceptor.NewClient(server, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, o ...client.GetOption) error {
		if _, ok := obj.(*trainjob.TrainJob); !ok {
			live++
		}
		return c.Get(ctx, key, obj, o...)
	}})
	l := lineage{cached: server, live: counted, jobs: newProvenJobs(8)}
	for i := range 3 {
		tj, job, err := l.ofPod(t.Context(), f.pod)
		if err != nil || tj == nil || tj.UID != "tj-uid" || job.Name != f.job.Name {
			t.Fatalf("pod %d: %v %v %v", i, tj, job, err)
		}
	}
	if live != 2 {
		t.Errorf("%d live reads of Jobs and JobSets for 3 pods of one Job, want 2 (the first pod's)", live)
	}
	// The TrainJob deleted and made again under its name: the old Job's
	// next pod is no longer proven its.
	if err := server.Delete(t.Context(), f.trainJob); err != nil {
		t.Fatal(err)
	}
	again := f.trainJob.DeepCopy()
	again.UID, again.ResourceVersion = "new-uid", ""
	if err := server.Create(t.Context(), again); err != nil {
		t.Fatal(err)
	}
	if tj, _, err := l.ofPod(t.Context(), f.pod); err != nil || tj != nil {
		t.Errorf("a pod of the older job's Job proven the new job's: %v %v", tj, err)
	}
}
