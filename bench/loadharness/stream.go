package loadharness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StreamOptions shape a load: N objects, the first Burst of them at once,
// the rest at Rate a second.
type StreamOptions struct {
	N, Burst int
	Rate     float64
}

// burstWorkers: how many creates of the burst are sent at once.
const burstWorkers = 8

// StreamInFlight bounds the stream's creates sent and not yet answered.
// The stream is open-loop: a create goes out every 1/rate s whether or not
// the ones before were answered, so a create's own latency (admission
// webhooks on a loaded API server) does not slow the stream down, as it
// did with a fixed pool of workers: 8 of them, each create taking 0.5 s,
// sent 16 a second where the stream asked for 20, and the run measured the
// pool rather than the integration. The bound keeps a server that stops
// answering from getting unbounded goroutines; at 20 a second it covers
// creates of up to 3.2 s. A create is recorded as the job's creation when
// it is sent, so its latency is still in every created → figure.
const StreamInFlight = 64

// Stream creates n objects: the first burst of them at once (burstWorkers
// at a time), the rest as a steady stream of rate per second (at most
// StreamInFlight unanswered). created is told each object's name as its create is sent.
func Stream(ctx context.Context, c client.Client, o StreamOptions, mk func(i int) (client.Object, error), created func(name string, at time.Time)) error {
	n, burst, rate := o.N, o.Burst, o.Rate
	errs := make(chan error, n)
	var wg sync.WaitGroup
	create := func(i int) {
		defer wg.Done()
		obj, err := mk(i)
		if err != nil {
			errs <- err
			return
		}
		created(obj.GetName(), time.Now())
		if err := CreateRetrying(ctx, c, obj); err != nil {
			errs <- fmt.Errorf("creating %s: %w", obj.GetName(), err)
		}
	}
	burstSlots := make(chan struct{}, burstWorkers)
	streamSlots := make(chan struct{}, StreamInFlight)
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	// Interrupted, the rest is not submitted: the set-up's cluster is torn
	// down as soon as the jobs being created are.
submitting:
	for i := range n {
		slots := burstSlots
		if i >= burst {
			slots = streamSlots
			select {
			case <-ctx.Done():
				break submitting
			case <-tick.C:
			}
		}
		select {
		case <-ctx.Done():
			break submitting
		case slots <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots }()
			create(i)
		}()
	}
	tick.Stop()
	wg.Wait()
	close(errs)
	if err := ctx.Err(); err != nil {
		return err
	}
	for err := range errs {
		return err
	}
	return nil
}
