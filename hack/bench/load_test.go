package main

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
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
	go func() { done <- submit(ctx, c, 2000, 1, mk, newRecorder()) }()
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
