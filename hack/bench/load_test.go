package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/trainjob-kueue/trainjob-kueue/hack/fixtures"
	"github.com/trainjob-kueue/trainjob-kueue/hack/loadharness"
)

// An interrupted bench stops submitting, so that its cluster is torn down
// at once rather than after the stream of the load has run its course.
func TestSubmitStopsWhenInterrupted(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	mk := func(i int) (client.Object, error) {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("job-%d", i)}}, nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	// Half the load in a burst, the other half at one job a second: more
	// than 15 minutes uninterrupted.
	go func() { done <- submit(ctx, c, 2000, 1000, 1, mk, newRecorder()) }()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("submit = %v, want the interruption", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("submit went on after the interruption")
	}
}

// The stream is open-loop: with every create unanswered, it goes on
// sending one a tick up to streamInFlight, where a pool of 8 workers would
// have stopped at 8 and slowed the stream to its creates' latency; and it
// never has more than streamInFlight unanswered.
func TestTheStreamDoesNotWaitForItsCreatesAnswers(t *testing.T) {
	var (
		mu          sync.Mutex
		inFlight    int
		most        int
		reachedMost = make(chan struct{})
		// reached closes reachedMost once: after the answers, the
		// stream's last creates may fill the window again.
		reached = sync.OnceFunc(func() { close(reachedMost) })
		answer  = make(chan struct{})
	)
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			mu.Lock()
			inFlight++
			most = max(most, inFlight)
			if inFlight == streamInFlight {
				reached()
			}
			mu.Unlock()
			<-answer
			mu.Lock()
			inFlight--
			mu.Unlock()
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	mk := func(i int) (client.Object, error) {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("job-%d", i)}}, nil
	}
	n := streamInFlight + 20
	done := make(chan error, 1)
	go func() { done <- submit(t.Context(), c, n, 0, 1000, mk, newRecorder()) }()
	select {
	case <-reachedMost:
	case err := <-done:
		t.Fatalf("submit returned %v with its creates unanswered", err)
	case <-time.After(time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%d creates unanswered at most, want the stream to reach %d", most, streamInFlight)
	}
	close(answer)
	if err := <-done; err != nil {
		t.Fatalf("submit: %v", err)
	}
	var got corev1.ConfigMapList
	if err := c.List(t.Context(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != n || most > streamInFlight {
		t.Errorf("%d created, at most %d unanswered; want %d, at most %d", len(got.Items), most, n, streamInFlight)
	}
}

// A harness-scale ClusterQueue holds every Workload after its quota
// reservation (the hold check), with quota for any N of GPUs and CPUs; its
// memory quota is left as it was.
func TestAHoldingClusterQueueChecksEveryWorkloadAndFitsAnyN(t *testing.T) {
	_, cq, _ := fixtures.Queue(ns, "bench-0", pool)
	before := slices.Clone(cq.Spec.ResourceGroups[0].Flavors[0].Resources)
	holding(cq)
	if s := cq.Spec.AdmissionChecksStrategy; s == nil || len(s.AdmissionChecks) != 1 || s.AdmissionChecks[0].Name != holdCheck {
		t.Fatalf("admission checks %+v, want the hold check", s)
	}
	for i, r := range cq.Spec.ResourceGroups[0].Flavors[0].Resources {
		switch {
		case r.Name == corev1.ResourceMemory:
			if !r.NominalQuota.Equal(before[i].NominalQuota) {
				t.Errorf("memory quota %s, want it as it was", r.NominalQuota.String())
			}
		case r.NominalQuota.Value() < 15000*2:
			t.Errorf("%s quota %s holds fewer than 15,000 jobs of 2", r.Name, r.NominalQuota.String())
		}
	}
}

// A harness-scale run streams every job (Kueue with its shipped client
// budget exits under a burst of thousands of Workloads); the others burst
// half of them.
func TestAHarnessScaleRunStreamsEveryJob(t *testing.T) {
	if got := burstOf(options{Flags: loadharness.Flags{N: 15000}, hold: true}); got != 0 {
		t.Errorf("harness-scale burst %d, want 0", got)
	}
	if got := burstOf(options{Flags: loadharness.Flags{N: 500}}); got != 250 {
		t.Errorf("burst %d, want half of 500", got)
	}
}
