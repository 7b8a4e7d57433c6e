// Package multikueue is trainjob-kueue's side of Kueue's MultiKueue that
// is not the job framework's: what happens to a dispatched TrainJob
// between the manager and its workers when MultiKueue alone would say
// nothing, or keep quota for a job that cannot start.
//
//   - worker_refusals.go (WorkerRefusals, on a MultiKueue manager): for a
//     dispatched job whose Workload waits, reads its copy on each worker,
//     says on the manager's TrainJob why a worker cannot run it, and holds
//     the copy on a worker that refuses the job MultiKueue would create
//     there (a dry run of that create);
//   - name_clashes.go (NameClashes, on every cluster, which may be a
//     worker): holds a Workload MultiKueue dispatched here while a TrainJob
//     of its job's name that MultiKueue did not make is in the way
//     (kueue#12404), and releases it once that job is gone;
//   - hold.go: the hold both put on a worker's copy, and why it is safe
//     with MultiKueue;
//   - worker_clients.go: clients of the workers, from the kubeconfig
//     Secrets MultiKueue itself uses.
//
// What changes the job framework's answers for a dispatched job (it runs
// remotely; it is never started here) stays in package integration
// (multikueue.go); the webhook's judgement of a dispatching queue is
// package webhook's (multikueue.go).
package multikueue
