package podsets

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Options tune the projection to the cluster it runs for.
type Options struct {
	// Topology reads the topology requests of the roles' pod templates;
	// nil when Kueue's TopologyAwareScheduling is off.
	Topology Topology
	// Defaulter fills in what the API server defaults when it stores a
	// Workload, so computed PodSets compare equal to stored ones. Nil leaves
	// the PodSets as computed.
	Defaulter Defaulter
	// MaxPodSets is the most PodSets a Workload may have in the installed
	// Kueue (8 in v0.16, 18 in v0.19); 0 sets no limit.
	MaxPodSets int
}

// TooManyPodSetsError reports a job with more roles than a Workload of the
// installed Kueue may have PodSets.
type TooManyPodSetsError struct {
	Roles, Max int
}

func (e *TooManyPodSetsError) Error() string {
	return fmt.Sprintf("the runtime has %d replicatedJobs and the installed Kueue allows at most %d PodSets per Workload: merge roles in the runtime (or run a Kueue that allows more)", e.Roles, e.Max)
}

// ErrNoReplicatedJobs reports a runtime that would run nothing.
var ErrNoReplicatedJobs = errors.New("the runtime's template has no replicatedJobs")

// Roles returns the replicatedJobs of the runtime as Trainer will run them for
// job, in runtime order.
func Roles(job *trainjob.TrainJob, rt *trainer.TrainingRuntimeSpec, shape Shape) ([]Role, error) {
	jobs := rt.Template.Spec.ReplicatedJobs
	if len(jobs) == 0 {
		return nil, ErrNoReplicatedJobs
	}
	if job.Spec.Trainer != nil && job.Spec.Trainer.ResourcesPerNode != nil {
		r := job.Spec.Trainer.ResourcesPerNode
		if err := checkQuantities("spec.trainer.resourcesPerNode.requests", r.Requests); err != nil {
			return nil, err
		}
		if err := checkQuantities("spec.trainer.resourcesPerNode.limits", r.Limits); err != nil {
			return nil, err
		}
	}
	roles := make([]Role, 0, len(jobs))
	var pods int64
	for i := range jobs {
		rj := &jobs[i]
		ancestor := rj.Template.Labels[AncestorLabel]
		perReplica, err := podsPerReplica(job, rt, rj.Name, ancestor, rj.Template.Spec.Parallelism)
		if err != nil {
			return nil, err
		}
		reps, err := replicas(rj.Name, ancestor, rj.Replicas)
		if err != nil {
			return nil, err
		}
		n, err := podCount(rj.Name, reps, perReplica)
		if err != nil {
			return nil, err
		}
		if err := indexedJobLimit(rj.Name, rj.Template.Spec.CompletionMode, perReplica); err != nil {
			return nil, err
		}
		if pods += int64(n); pods > math.MaxInt32 {
			// A gang's minMember counts every pod of the job.
			return nil, fmt.Errorf("the job would run %d pods or more in all, more than Kubernetes can count in one gang", pods)
		}
		tmpl := *rj.Template.Spec.Template.DeepCopy()
		if err := shape.ApplyUserOverrides(job, rj.Name, &tmpl); err != nil {
			return nil, fmt.Errorf("applying spec overrides to replicatedJob %q: %w", rj.Name, err)
		}
		if err := applyTrainer(job, rt, shape.Rules(), rj.Name, ancestor, &tmpl.Spec); err != nil {
			return nil, fmt.Errorf("replicatedJob %q: spec.trainer.resourcesPerNode: %w", rj.Name, err)
		}
		if err := checkPodQuantities(rj.Name, &tmpl.Spec); err != nil {
			return nil, err
		}
		if err := checkClaims(rj.Name, &tmpl.Spec); err != nil {
			return nil, err
		}
		var deps []Dependency
		for _, d := range rj.DependsOn {
			deps = append(deps, Dependency{Name: d.Name, Complete: d.Status == jobset.DependencyComplete})
		}
		roles = append(roles, Role{
			Name:           rj.Name,
			Ancestor:       ancestor,
			Replicas:       reps,
			PodsPerReplica: perReplica,
			Template:       tmpl,
			DependsOn:      deps,
		})
	}
	return roles, nil
}

// Build returns the Workload PodSets for job run with runtime rt.
func Build(job *trainjob.TrainJob, rt *trainer.TrainingRuntimeSpec, shape Shape, opts Options) ([]kueue.PodSet, error) {
	roles, err := Roles(job, rt, shape)
	if err != nil {
		return nil, err
	}
	return FromRoles(roles, opts)
}

// FromRoles projects roles onto PodSets.
func FromRoles(roles []Role, opts Options) ([]kueue.PodSet, error) {
	if opts.MaxPodSets > 0 && len(roles) > opts.MaxPodSets {
		return nil, &TooManyPodSetsError{Roles: len(roles), Max: opts.MaxPodSets}
	}
	podSets := make([]kueue.PodSet, len(roles))
	for i := range roles {
		r := &roles[i]
		podSets[i] = kueue.PodSet{
			Name:     kueue.NewPodSetReference(r.Name),
			Count:    r.Count(),
			Template: *r.Template.DeepCopy(),
		}
		if opts.Topology != nil {
			req, err := opts.Topology.Request(r)
			if err != nil {
				return nil, fmt.Errorf("replicatedJob %q: %w", r.Name, err)
			}
			if err := placeableWithClaims(r, req); err != nil {
				return nil, err
			}
			podSets[i].TopologyRequest = req
		}
	}
	if opts.Defaulter != nil {
		if err := opts.Defaulter.Default(podSets); err != nil {
			return nil, fmt.Errorf("applying Workload defaults: %w", err)
		}
	}
	return podSets, nil
}

// applyTrainer copies the TrainJob's trainer fields into the pod spec the way
// Trainer does: image, command and args go to the "node" container of the
// trainer step; resourcesPerNode goes to that container (and, by rules, to
// the MPI "node" workers when the launcher runs as a node), replacing or
// merging with its resources. Env is left out: it never changes where or
// whether a pod fits.
func applyTrainer(job *trainjob.TrainJob, rt *trainer.TrainingRuntimeSpec, rules Rules, name, ancestor string, spec *corev1.PodSpec) error {
	t := job.Spec.Trainer
	if t == nil {
		return nil
	}
	trainerStep := ancestor == AncestorTrainer && (rt.MLPolicy != nil || !rules.ResourcesPerNodeNeedsMLPolicy)
	workers := rules.LauncherAsNodeWorkersGetResources && runLauncherAsNode(rt) && name == NodeName
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if c.Name != NodeName {
			continue
		}
		if ancestor == AncestorTrainer {
			if t.Image != nil {
				c.Image = *t.Image
			}
			if t.Command != nil {
				c.Command = t.Command
			}
			if t.Args != nil {
				c.Args = t.Args
			}
		}
		r := t.ResourcesPerNode
		if r == nil || !(trainerStep || workers) {
			continue
		}
		// Either way Trainer writes the container's limits and requests
		// alone: the runtime's resources.claims (DRA) of that container are
		// gone (its pod's resourceClaims stay, allocated and counted).
		switch {
		case rules.ResourcesPerNodeMerges:
			c.Resources = corev1.ResourceRequirements{Limits: mergeResources(c.Resources.Limits, r.Limits), Requests: mergeResources(c.Resources.Requests, r.Requests)}
		case r.Limits != nil || r.Requests != nil:
			c.Resources = corev1.ResourceRequirements{Limits: r.Limits.DeepCopy(), Requests: r.Requests.DeepCopy()}
		}
	}
	return nil
}

// mergeResources is a strategic merge of two resource lists: per name, the
// override wins.
func mergeResources(base, override corev1.ResourceList) corev1.ResourceList {
	if base == nil && override == nil {
		return nil
	}
	out := base.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range override {
		out[name] = q.DeepCopy()
	}
	return out
}

// PriorityClass is the priority class of the trainer step, which is what the
// job is about; other roles' classes are only used when it has none.
func PriorityClass(roles []Role) string {
	for i := range roles {
		if roles[i].Ancestor == AncestorTrainer && roles[i].Template.Spec.PriorityClassName != "" {
			return roles[i].Template.Spec.PriorityClassName
		}
	}
	for i := range roles {
		if pc := roles[i].Template.Spec.PriorityClassName; pc != "" {
			return pc
		}
	}
	return ""
}

// podsPerReplica is the parallelism Trainer gives replicatedJob rj, following
// the rules of Trainer's runtime core and its torch, mpi and plainml plugins:
//   - every job starts from its own parallelism (default 1);
//   - the trainer-ancestor job of a runtime with an mlPolicy starts from
//     mlPolicy.numNodes (default 1) instead;
//   - that start is at least 1: Trainer rewrites a parallelism of 0 to 1
//     (runtime.WithPodSet), so such a job runs one pod and books one;
//   - torch and plain runtimes: spec.trainer.numNodes, when set, replaces the
//     trainer-ancestor job's count;
//   - MPI: spec.trainer.numNodes goes to the job named "node" (minus the
//     launcher with runLauncherAsNode, at least 1); the launcher, which is the
//     trainer ancestor, keeps mlPolicy.numNodes.
func podsPerReplica(job *trainjob.TrainJob, rt *trainer.TrainingRuntimeSpec, name, ancestor string, parallelism *int32) (int32, error) {
	count := ptr.Deref(parallelism, 1)
	if ancestor == AncestorTrainer && rt.MLPolicy != nil {
		count = ptr.Deref(rt.MLPolicy.NumNodes, 1)
	}
	count = max(count, 1)
	if numNodes := trainerNumNodes(job); numNodes != nil {
		if *numNodes < 1 {
			return 0, fmt.Errorf("spec.trainer.numNodes is %d: it must be at least 1", *numNodes)
		}
		switch {
		case isMPI(rt):
			if name == NodeName {
				count = *numNodes
				if runLauncherAsNode(rt) {
					count = max(*numNodes-1, 1)
				}
			}
		case ancestor == AncestorTrainer:
			count = *numNodes
		}
	}
	return count, nil
}

// replicas is how many Jobs JobSet creates for the role. Trainer pins its
// own steps (initializers and trainer) to one; custom jobs keep theirs.
func replicas(name, ancestor string, declared int32) (int32, error) {
	switch ancestor {
	case AncestorTrainer, AncestorDatasetInitializer, AncestorModelInitializer:
		return 1, nil
	}
	if declared == 0 {
		// JobSet defaults an unset replicas to 1.
		return 1, nil
	}
	if declared < 1 {
		return 0, fmt.Errorf("replicatedJob %q has replicas %d: it must be at least 1", name, declared)
	}
	return declared, nil
}

func podCount(name string, replicas, perReplica int32) (int32, error) {
	total := int64(replicas) * int64(perReplica)
	if total > math.MaxInt32 {
		return 0, fmt.Errorf("replicatedJob %q would run %d pods, more than a PodSet can hold", name, total)
	}
	return int32(total), nil
}

// maxIndexedParallelism is Kubernetes' limit on an Indexed Job's
// parallelism (pkg/apis/batch/validation): JobSet's Job would be refused,
// and the job would hold its quota without a pod.
const maxIndexedParallelism = 100000

func indexedJobLimit(name string, mode *batchv1.CompletionMode, perReplica int32) error {
	if mode != nil && *mode == batchv1.IndexedCompletion && perReplica > maxIndexedParallelism {
		return fmt.Errorf("replicatedJob %q would run %d pods in one Indexed Job: Kubernetes allows at most %d", name, perReplica, maxIndexedParallelism)
	}
	return nil
}

func trainerNumNodes(job *trainjob.TrainJob) *int32 {
	if job.Spec.Trainer == nil {
		return nil
	}
	return job.Spec.Trainer.NumNodes
}

func isMPI(rt *trainer.TrainingRuntimeSpec) bool {
	return rt.MLPolicy != nil && rt.MLPolicy.MPI != nil
}

func runLauncherAsNode(rt *trainer.TrainingRuntimeSpec) bool {
	return isMPI(rt) && ptr.Deref(rt.MLPolicy.MPI.RunLauncherAsNode, false)
}

// checkQuantities refuses requests and limits pods could never be given: a
// negative one would book negative quota (and let other jobs over-admit);
// a fractional extended resource (nvidia.com/gpu: 0.5) is refused by
// Kubernetes on pods, so the job would hold quota and never run.
func checkQuantities(where string, list corev1.ResourceList) error {
	for _, name := range sortedResourceNames(list) {
		q := list[name]
		if q.Sign() < 0 {
			return fmt.Errorf("%s %s is %s: quantities must not be negative", where, name, q.String())
		}
		if extended(name) && q.MilliValue()%1000 != 0 {
			return fmt.Errorf("%s %s is %s: extended resources take whole numbers (Kubernetes refuses fractions on pods)", where, name, q.String())
		}
	}
	return nil
}

// checkPodQuantities checks every container's requests and limits.
func checkPodQuantities(role string, spec *corev1.PodSpec) error {
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			c := &list[i]
			where := fmt.Sprintf("replicatedJob %q container %q", role, c.Name)
			if err := checkQuantities(where+" requests", c.Resources.Requests); err != nil {
				return err
			}
			if err := checkQuantities(where+" limits", c.Resources.Limits); err != nil {
				return err
			}
		}
	}
	return nil
}

// placeableWithClaims refuses a role that asks Kueue for a topology
// (required, preferred or unconstrained) and claims DRA devices: Kueue's
// topology-aware scheduling places pods by node capacity, and DRA devices
// are no node capacity (kueue#10548, open), so such a job would be booked
// where its devices may not be.
func placeableWithClaims(r *Role, req *kueue.PodSetTopologyRequest) error {
	if req == nil || (req.Required == nil && req.Preferred == nil && !ptr.Deref(req.Unconstrained, false)) {
		return nil
	}
	for _, c := range r.Template.Spec.ResourceClaims {
		if c.ResourceClaimTemplateName != nil {
			return fmt.Errorf("replicatedJob %q asks for topology-aware placement and claims DRA devices (resourceClaims[%s]): Kueue's topology-aware scheduling does not place DRA devices (kueue#10548); drop the role's kueue.x-k8s.io/podset-*-topology annotation, or claim its GPUs as an extended resource",
				r.Name, c.Name)
		}
	}
	return nil
}

// checkClaims refuses a pod claiming an existing ResourceClaim by name (a
// shared claim): Kueue counts DRA devices only from ResourceClaimTemplates,
// so such a job would run on devices no quota booked.
func checkClaims(role string, spec *corev1.PodSpec) error {
	for _, c := range spec.ResourceClaims {
		if c.ResourceClaimName != nil {
			return fmt.Errorf("replicatedJob %q claims ResourceClaim %q by name (resourceClaims[%s].resourceClaimName): Kueue does not count a shared claim against quota, so the job would run on devices no quota booked; give the role a ResourceClaimTemplate (resourceClaimTemplateName) instead",
				role, *c.ResourceClaimName, c.Name)
		}
	}
	return nil
}

// extended: a resource named outside the kubernetes.io namespace, as
// Kubernetes tells extended resources from native ones.
func extended(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	domain := s[:strings.Index(s, "/")]
	return domain != "kubernetes.io" && !strings.HasSuffix(domain, ".kubernetes.io")
}

func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(list))
}
