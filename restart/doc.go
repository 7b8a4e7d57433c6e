// Package restart runs the manager again, in the same process, when what
// it learned at its start no longer holds (restartwatch sees a mode
// change: the TrainJob CRD's shape, Kueue's built-in TrainJob integration
// turned on or off, scheduler-plugins' PodGroup CRD), without a webhook
// call refused on the way.
//
// The pieces, each in a file of its own:
//   - webhooks.go: Webhooks, the process's webhook server, listening across
//     runs; each run registers on its own view (RunWebhooks) and answers
//     once it Serves, the run before it answering until then.
//   - readiness.go: Readiness, when a replica takes calls (Probe, for the
//     kubelet) and when its restart is done (Check, for the turn).
//   - restarter.go: the Restarter a run's restart watches Stop: it takes
//     the replicas' turn (restartwatch.Turn), drains while another replica
//     answers (the roll call), and ends the run with a mode change, which
//     InProcess tells the process's loop to run again.
//   - drain.go: a signal's drain (DrainAfter), during which webhook answers
//     close their connections.
//
// cmd/trainjob-kueue wires them; the API is the types above and their
// constructors.
package restart
