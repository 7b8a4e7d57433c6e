// Package gang keeps gang scheduling of TrainJobs sound: jobs start whole or
// not at all, and nobody else's pod joins a job's gang.
//
// Two gang schedulers are served, each under one name:
//   - coscheduling: scheduler-plugins' PodGroups (scheduling.x-k8s.io);
//   - workload-api (WorkloadAPI): the PodGroups of Kubernetes 1.37's
//     Workload API (scheduling.k8s.io/v1beta1), made per wave and
//     admission.
//
// Which are served is learned at the manager's start (schedulers.go:
// Schedulers, carried in settings.Shared.Gangs); a job's or its
// ClusterQueue's choice is read in setting.go. The files:
//
//   - setting.go: the modes, the annotations' values and their bounds.
//   - schedulers.go: Schedulers, and the refusal of a mode the cluster
//     does not serve.
//   - plan.go: from data alone, which PodGroups a job gets at admission
//     (PlanFor), how its pods are labelled into them, their names.
//   - workloadapi.go: a workload-api group's name, object and admission
//     token; which groups a pod may join (WorkloadAPIGroupFor), which
//     ended (Ended).
//   - workloadapi_claim.go: what stands under a group's name, which others
//     can compute (ClaimOf, WorkloadAPINameOf, WorkloadAPIOwned).
//   - workloadapi_write.go: the one writer of workload-api groups
//     (WorkloadAPIWriter): create then prove ours, and release those of
//     ended admissions; integration calls it at a job's start and after
//     each reconcile.
//   - keeper.go and waiting.go: the controller that keeps running jobs'
//     coscheduling PodGroups sized for the wave being placed, and retries
//     gangs that wait for room.
//   - rbac.go: the permissions all of it needs.
//
// The arithmetic of gangs (waves, minMember, minResources) is quota's.
package gang
