package migrate

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/runtimesource"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// Options say which TrainJobs to check.
type Options struct {
	// Namespace; "" for every namespace.
	Namespace string
	// JobSetIntegrationOff: Kueue's Configuration is known to leave its
	// JobSet integration off (--kueue-config); unknown, it is taken as on.
	JobSetIntegrationOff bool
	// To is the switch's direction: ToOurs ("" too) or ToInTree.
	To string
	// InTree computes PodSets as Kueue's built-in integration does
	// (InTreePodSets); the way back (ToInTree) judges with it.
	InTree PodSetsOf
}

// Check judges every TrainJob in o's scope. It reads the TrainJob and
// Workload CRDs (the Trainer shape, the Workload defaults) and lists each
// kind once: TrainJobs, Workloads, TrainingRuntimes, ClusterTrainingRuntimes
// and, on a Trainer that snapshots runtimes (v2.3), ConfigMaps; never one
// request per job.
func Check(ctx context.Context, c client.Reader, o Options) ([]Verdict, error) {
	s, projection, err := discovery.ProjectionOf(ctx, c)
	if err != nil {
		return nil, err
	}
	if o.To == ToInTree {
		release, err := discovery.InstalledKueueRelease(ctx, c)
		if err != nil {
			return nil, err
		}
		if err := wayBackJudgeable(release); err != nil {
			return nil, err
		}
	}
	return checkWith(ctx, c, o, s, projection)
}

// wayBackJudgeable refuses to judge the way back on a Kueue release whose
// built-in integration is not the one this binary links (InTreePodSets
// computes PodSets with Kueue v0.19.2's code): before v0.19 that
// integration reads other Trainer API shapes by other rules (v0.16 only
// Trainer v2.1's podTemplateOverrides), and a verdict from v0.19's rules
// would be a guess. Newer releases are refused already
// (discovery.KueueReleaseOf).
func wayBackJudgeable(installed discovery.KueueRelease) error {
	if installed.PodsReadyByDefault {
		return nil
	}
	return fmt.Errorf("migrate --check --to intree judges with the built-in TrainJob integration of Kueue v0.19, which this plugin links, and the cluster runs %s (its Workload CRD allows %d PodSets): that release's integration computes PodSets by its own rules, which this check cannot play. Upgrade Kueue to v0.19 before switching back, or check with a plugin built for the cluster's Kueue", installed.Name(), installed.MaxPodSets)
}

// checkWith is Check for a Trainer of shape s, projecting PodSets with
// projection.
func checkWith(ctx context.Context, c client.Reader, o Options, s shape.Shape, projection podsets.Options) ([]Verdict, error) {
	if o.To == ToInTree && o.InTree == nil {
		return nil, fmt.Errorf("the way back is judged with Kueue's built-in integration's PodSets (Options.InTree)")
	}
	in, err := fetch(ctx, c, o, s.Rules().RuntimeSnapshot)
	if err != nil {
		return nil, err
	}
	byOwner := map[string]*kueue.Workload{}
	for i := range in.workloads.Items {
		wl := &in.workloads.Items[i]
		if owner := metav1.GetControllerOf(wl); owner != nil && owner.Kind == trainer.TrainJobKind {
			byOwner[string(owner.UID)] = wl
		}
	}
	verdicts := make([]Verdict, 0, len(in.jobs.Items))
	for i := range in.jobs.Items {
		job := &in.jobs.Items[i]
		j := Job{Job: job, Workload: byOwner[string(job.UID)]}
		if o.To == ToInTree {
			if j.Workload != nil && !finishedJob(job) {
				j.PodSets, j.Err = o.InTree(ctx, job)
				sanitize(&j)
			}
			verdicts = append(verdicts, JudgeWayBack(j))
			continue
		}
		if j.Workload != nil {
			j.PodSets, j.Err = project(ctx, in, job, s, projection)
			sanitize(&j)
		}
		verdicts = append(verdicts, Judge(j, s, !o.JobSetIntegrationOff))
	}
	slices.SortFunc(verdicts, func(a, b Verdict) int {
		if a.Namespace != b.Namespace {
			return compare(a.Namespace, b.Namespace)
		}
		return compare(a.Name, b.Name)
	})
	return verdicts, nil
}

// sanitize takes j's computed PodSets as Kueue's job framework takes a
// job's (JobPodSets) before it compares them with the stored ones, for
// either integration: duplicate env vars dropped, the last one kept.
func sanitize(j *Job) {
	jobframework.SanitizePodSets(j.PodSets)
}

func finishedJob(job *trainjob.TrainJob) bool {
	_, _, finished := job.Finished()
	return finished
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// project computes trainjob-kueue's PodSets for job from the listed
// runtimes, as the manager does.
func project(ctx context.Context, in *listed, job *trainjob.TrainJob, s shape.Shape, o podsets.Options) ([]kueue.PodSet, error) {
	rt, _, err := runtimesource.Read(ctx, in, job, s.Rules())
	if err != nil {
		return nil, err
	}
	roles, err := podsets.Roles(job, rt, s)
	if err != nil {
		return nil, err
	}
	return podsets.FromRoles(roles, o)
}

// listed is what one list per kind read; as a client.Reader it answers
// the runtime source's reads from it.
type listed struct {
	jobs      trainjob.TrainJobList
	workloads kueue.WorkloadList
	runtimes  map[client.ObjectKey]*trainer.TrainingRuntime
	clusterRT map[string]*trainer.ClusterTrainingRuntime
	// configMaps, by key; nil when the Trainer takes no snapshots.
	configMaps map[client.ObjectKey]*corev1.ConfigMap
}

func fetch(ctx context.Context, c client.Reader, o Options, snapshots bool) (*listed, error) {
	in := &listed{runtimes: map[client.ObjectKey]*trainer.TrainingRuntime{}, clusterRT: map[string]*trainer.ClusterTrainingRuntime{}}
	var ns []client.ListOption
	if o.Namespace != "" {
		ns = append(ns, client.InNamespace(o.Namespace))
	}
	if err := c.List(ctx, &in.jobs, ns...); err != nil {
		return nil, fmt.Errorf("listing TrainJobs: %w", err)
	}
	if err := c.List(ctx, &in.workloads, ns...); err != nil {
		return nil, fmt.Errorf("listing Workloads: %w", err)
	}
	var rts trainer.TrainingRuntimeList
	if err := c.List(ctx, &rts, ns...); err != nil {
		return nil, fmt.Errorf("listing TrainingRuntimes: %w", err)
	}
	for i := range rts.Items {
		in.runtimes[client.ObjectKeyFromObject(&rts.Items[i])] = &rts.Items[i]
	}
	var crts trainer.ClusterTrainingRuntimeList
	if err := c.List(ctx, &crts); err != nil {
		return nil, fmt.Errorf("listing ClusterTrainingRuntimes: %w", err)
	}
	for i := range crts.Items {
		in.clusterRT[crts.Items[i].Name] = &crts.Items[i]
	}
	if !snapshots {
		return in, nil
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, ns...); err != nil {
		if apierrors.IsForbidden(err) {
			// As explain: who may not read ConfigMaps gets the live runtime.
			return in, nil
		}
		return nil, fmt.Errorf("listing ConfigMaps (Trainer's runtime snapshots): %w", err)
	}
	in.configMaps = map[client.ObjectKey]*corev1.ConfigMap{}
	for i := range cms.Items {
		in.configMaps[client.ObjectKeyFromObject(&cms.Items[i])] = &cms.Items[i]
	}
	return in, nil
}

// Get answers from the lists; what they lack is not found.
func (in *listed) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	var found client.Object
	var resource string
	switch o := obj.(type) {
	case *trainer.TrainingRuntime:
		resource = "trainingruntimes"
		if rt, ok := in.runtimes[key]; ok {
			rt.DeepCopyInto(o)
			found = o
		}
	case *trainer.ClusterTrainingRuntime:
		resource = "clustertrainingruntimes"
		if rt, ok := in.clusterRT[key.Name]; ok {
			rt.DeepCopyInto(o)
			found = o
		}
	case *corev1.ConfigMap:
		resource = "configmaps"
		if in.configMaps == nil {
			return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, key.Name, fmt.Errorf("not listed"))
		}
		if cm, ok := in.configMaps[key]; ok {
			cm.DeepCopyInto(o)
			found = o
		}
	default:
		return fmt.Errorf("migrate reads no %T", obj)
	}
	if found == nil {
		return apierrors.NewNotFound(schema.GroupResource{Group: trainer.GroupVersion.Group, Resource: resource}, key.Name)
	}
	return nil
}

// List is not served: everything was listed once.
func (in *listed) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return fmt.Errorf("migrate lists each kind once, up front")
}
