package integration

import (
	"context"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// NewScheme holds every type the manager reads or writes.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(kueue.AddToScheme(s))
	utilruntime.Must(trainjob.AddToScheme(s))
	utilruntime.Must(jobsetapi.AddToScheme(s))
	utilruntime.Must(schedv1alpha1.AddToScheme(s))
	return s
}

// Setup registers the indexes, the reconciler and, unless disabled, the
// webhook of the integration with mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options, withWebhook bool) error {
	if err := SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if opts.Recorder == nil {
		r, err := NewEventRecorder(mgr)
		if err != nil {
			return err
		}
		opts.Recorder = r
	}
	rec := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), opts.Recorder, opts)
	if err := rec.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the TrainJob reconciler: %w", err)
	}
	if opts.PodGroups {
		keeper := gang.NewKeeper(gang.KeeperOptions{
			Client:        mgr.GetClient(),
			Jobs:          runningJobs{rec.deps},
			Recorder:      rec.deps.recorder,
			Counted:       rec.deps.metrics.gang,
			RetryInterval: opts.GangRetryInterval,
			JobSets:       rec.deps.caps.NoJobsStatus,
		})
		if err := keeper.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the PodGroup keeper: %w", err)
		}
	}
	if withWebhook {
		if err := SetupWebhook(mgr, opts); err != nil {
			return fmt.Errorf("setting up the TrainJob webhook: %w", err)
		}
	}
	return nil
}

const (
	trainJobCRD = "trainjobs.trainer.kubeflow.org"
	workloadCRD = "workloads.kueue.x-k8s.io"
	podGroupCRD = "podgroups.scheduling.x-k8s.io"
)

// HasPodGroups reports whether scheduler-plugins' PodGroup CRD is installed.
func HasPodGroups(ctx context.Context, c client.Reader) (bool, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: podGroupCRD}, &crd); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading CRD %s: %w", podGroupCRD, err)
	}
	return true, nil
}

// Discover reads what the installed CRDs decide: the Trainer API shape and
// the Workload defaults. It refuses, saying why, what it can't serve.
func Discover(ctx context.Context, c client.Reader) (shape.Shape, podsets.Defaulter, error) {
	var tj apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: trainJobCRD}, &tj); err != nil {
		return nil, nil, fmt.Errorf("reading CRD %s (is Kubeflow Trainer installed?): %w", trainJobCRD, err)
	}
	s, err := DetectShape(&tj)
	if err != nil {
		return nil, nil, err
	}
	var wl apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: workloadCRD}, &wl); err != nil {
		return nil, nil, fmt.Errorf("reading CRD %s (is Kueue installed?): %w", workloadCRD, err)
	}
	d, err := podsets.NewSchemaDefaulter(&wl, kueue.SchemeGroupVersion.Version)
	if err != nil {
		return nil, nil, err
	}
	return s, d, nil
}

// DetectShape picks the override field from the TrainJob CRD's storage
// version schema, and tells Trainer releases apart where the field alone
// does not:
//   - spec.podSpecOverrides: Trainer v2.0.x;
//   - spec.podTemplateOverrides: Trainer v2.1.x;
//   - spec.runtimePatches: v2.2 and later; when the patches' pod spec has
//     terminationGracePeriodSeconds it is v2.3 or later, which merges
//     resourcesPerNode and applies it only with an mlPolicy.
func DetectShape(crd *apiextensionsv1.CustomResourceDefinition) (shape.Shape, error) {
	var found []string
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Storage || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
		for name := range spec.Properties {
			found = append(found, name)
		}
		if _, ok := spec.Properties["podTemplateOverrides"]; ok {
			return shape.PodTemplateOverrides{}, nil
		}
		if _, ok := spec.Properties["podSpecOverrides"]; ok {
			return shape.PodSpecOverrides{}, nil
		}
		if patches, ok := spec.Properties["runtimePatches"]; ok {
			v23 := hasPath(patches, "items", "trainingRuntimeSpec", "template", "spec", "replicatedJobs", "items",
				"template", "spec", "template", "spec", "terminationGracePeriodSeconds")
			return shape.RuntimePatches{
				Release: podsets.Rules{
					LauncherAsNodeWorkersGetResources: true,
					ResourcesPerNodeMerges:            v23,
					ResourcesPerNodeNeedsMLPolicy:     v23,
					RuntimeSnapshot:                   v23,
				},
				// v2.2.0 and v2.2.1 share a CRD; the first start asks.
				UnsuspendsInOnePatch: true,
			}, nil
		}
	}
	slices.Sort(found)
	return nil, fmt.Errorf("the installed TrainJob CRD has no override field this build supports (spec fields found: %v); supported: spec.podSpecOverrides (Kubeflow Trainer v2.0.x), spec.podTemplateOverrides (v2.1.x), spec.runtimePatches (v2.2 and later)", found)
}

// hasPath walks a schema through properties ("items" steps into arrays).
func hasPath(s apiextensionsv1.JSONSchemaProps, path ...string) bool {
	for _, p := range path {
		if p == "items" {
			if s.Items == nil || s.Items.Schema == nil {
				return false
			}
			s = *s.Items.Schema
			continue
		}
		next, ok := s.Properties[p]
		if !ok {
			return false
		}
		s = next
	}
	return true
}
