package loadharness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// An interrupted load stops submitting, so that its cluster is torn down
// at once rather than after the stream of the load has run its course.
func TestTheStreamStopsWhenInterrupted(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	mk := func(i int) (client.Object, error) {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("job-%d", i)}}, nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	// Half the load in a burst, the other half at one job a second: more
	// than 15 minutes uninterrupted.
	go func() {
		done <- Stream(ctx, c, StreamOptions{N: 2000, Burst: 1000, Rate: 1}, mk, func(string, time.Time) {})
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Stream = %v, want the interruption", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Stream went on after the interruption")
	}
}

// The stream is open-loop: with every create unanswered, it goes on
// sending one a tick up to StreamInFlight, where a pool of 8 workers would
// have stopped at 8 and slowed the stream to its creates' latency; and it
// never has more than StreamInFlight unanswered.
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
			if inFlight == StreamInFlight {
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
	n := StreamInFlight + 20
	done := make(chan error, 1)
	go func() {
		done <- Stream(t.Context(), c, StreamOptions{N: n, Rate: 1000}, mk, func(string, time.Time) {})
	}()
	select {
	case <-reachedMost:
	case err := <-done:
		t.Fatalf("Stream returned %v with its creates unanswered", err)
	case <-time.After(time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%d creates unanswered at most, want the stream to reach %d", most, StreamInFlight)
	}
	close(answer)
	if err := <-done; err != nil {
		t.Fatalf("Stream: %v", err)
	}
	var got corev1.ConfigMapList
	if err := c.List(t.Context(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != n || most > StreamInFlight {
		t.Errorf("%d created, at most %d unanswered; want %d, at most %d", len(got.Items), most, n, StreamInFlight)
	}
}
