package lifecycle

// State is where a TrainJob is on its way through the queue. Its value is
// the word every reader says: the metric's label, list's and explain's
// STATE, the reason of our condition on the TrainJob.
type State string

const (
	// NotQueued: Kueue does not manage the job (no queue name, or
	// spec.managedBy names another controller).
	NotQueued State = "NotQueued"
	// Queued: waiting for a quota reservation (also before its Workload
	// exists, and while its LocalQueue does not).
	Queued State = "Queued"
	// Requeued: queued again after an eviction (preemption, a pods-ready
	// timeout, an admission check's retry): waiting for a reservation.
	Requeued State = "Requeued"
	// WaitingForRuntime: held out of the queue by trainjob-kueue (its
	// Workload deactivated, its quota given back) while the job can't
	// start from its runtime.
	WaitingForRuntime State = "WaitingForRuntime"
	// HeldByPolicy: held out of the queue by trainjob-kueue after a
	// ValidatingAdmissionPolicy refused the job's start; queued again
	// after a backoff.
	HeldByPolicy State = "HeldByPolicy"
	// HeldOnWorker: on a MultiKueue worker, the copy MultiKueue dispatched
	// here is held (a job of its name is in the way, or the worker refuses
	// the copy): its quota goes back, MultiKueue tries the other workers.
	HeldOnWorker State = "HeldOnWorker"
	// Inactive: the Workload was deactivated by someone else
	// (spec.active=false); Kueue does not queue it until it is set true.
	Inactive State = "Inactive"
	// QuotaReserved: quota reserved, waiting for admission checks.
	QuotaReserved State = "QuotaReserved"
	// Admitted: admitted, not started yet (starting).
	Admitted State = "Admitted"
	// Running: started, here or on a MultiKueue worker.
	Running State = "Running"
	// Evicted: evicted while admitted, being stopped; it is queued again
	// once stopped (Requeued).
	Evicted State = "Evicted"
	// Finished: Trainer or Kueue says the job succeeded.
	Finished State = "Finished"
	// Failed: Trainer or Kueue says the job failed.
	Failed State = "Failed"
)

// States are every State, in the order a job meets them.
func States() []State {
	return []State{NotQueued, Queued, Requeued, WaitingForRuntime, HeldByPolicy, HeldOnWorker, Inactive, QuotaReserved, Admitted, Running, Evicted, Finished, Failed}
}

// Waiting: the job waits for a quota reservation (it has a position in
// its ClusterQueue).
func (s State) Waiting() bool { return s == Queued || s == Requeued }

// Held: the job is out of the queue until something named in its message
// changes.
func (s State) Held() bool {
	return s == WaitingForRuntime || s == HeldByPolicy || s == HeldOnWorker || s == Inactive
}

// Done: the job has finished, either way.
func (s State) Done() bool { return s == Finished || s == Failed }

// Unmapped are the States a reader's table does not map (mapped says
// whether it does): each reader's test asks for none, so a new State that
// a reader leaves out fails there.
func Unmapped(mapped func(State) bool) []State {
	var out []State
	for _, s := range States() {
		if !mapped(s) {
			out = append(out, s)
		}
	}
	return out
}
