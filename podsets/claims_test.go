package podsets_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// withClaims gives every role of rt a DRA claim: the pod's resourceClaims
// entry from a ResourceClaimTemplate (what Kueue counts against quota),
// and each container's resources.claims naming it.
func withClaims(rt *trainer.TrainingRuntimeSpec) *trainer.TrainingRuntimeSpec {
	for i := range rt.Template.Spec.ReplicatedJobs {
		spec := &rt.Template.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec
		spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: ptr.To("two-gpus")}}
		for j := range spec.Containers {
			spec.Containers[j].Resources.Claims = []corev1.ResourceClaim{{Name: "gpus"}}
		}
	}
	return rt
}

// Every role's PodSet keeps its pod's resourceClaims and its containers'
// resources.claims, on every Trainer shape, whatever the TrainJob sets:
// Kueue counts DRA devices from the PodSet templates' claims, so a claim
// lost here is a GPU job that bypasses quota. The one exception is
// Trainer's own: where spec.trainer.resourcesPerNode applies, every release
// writes the node container's limits and requests alone, so that
// container's resources.claims are not in the pods either (its pod's
// resourceClaims stay: still allocated and counted).
func TestPodSetsCarryTheRuntimesDRAClaims(t *testing.T) {
	shapes := map[string]shape.Shape{
		"v2.0 podSpecOverrides":     shape.PodSpecOverrides{},
		"v2.1 podTemplateOverrides": shape.PodTemplateOverrides{},
		"v2.2 runtimePatches":       shape.RuntimePatches{Release: podsets.Rules{LauncherAsNodeWorkersGetResources: true}},
		"v2.3 runtimePatches":       shape.RuntimePatches{Release: podsets.Rules{LauncherAsNodeWorkersGetResources: true, ResourcesPerNodeMerges: true, ResourcesPerNodeNeedsMLPolicy: true, RuntimeSnapshot: true}},
	}
	gpus := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	runtimes := map[string]*trainer.TrainingRuntimeSpec{
		"torch with initializers": runtimeOf(torch(ptr.To[int32](3)),
			rj{name: "dataset-initializer", ancestor: "dataset-initializer", replicas: 1},
			rj{name: "model-initializer", ancestor: "model-initializer", replicas: 1},
			rj{name: "node", ancestor: "trainer", replicas: 1}),
		"MPI launcher and nodes": runtimeOf(mpi(ptr.To[int32](2), false),
			rj{name: "launcher", ancestor: "trainer", replicas: 1, container: "launcher"},
			rj{name: "node", replicas: 1}),
	}
	jobs := map[string]*trainjob.TrainJob{
		"no trainer fields": jobWith(nil),
		"numNodes set":      jobWith(numNodes(4)),
		"resourcesPerNode":  jobWith(perNode(gpus)),
	}
	wantPod := []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: ptr.To("two-gpus")}}
	for sn, s := range shapes {
		for rn, rt := range runtimes {
			for jn, job := range jobs {
				t.Run(sn+"/"+rn+"/"+jn, func(t *testing.T) {
					got, err := podsets.Build(job, withClaims(rt.DeepCopy()), s, podsets.Options{})
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(rt.Template.Spec.ReplicatedJobs) {
						t.Fatalf("%d PodSets for %d roles", len(got), len(rt.Template.Spec.ReplicatedJobs))
					}
					for _, ps := range got {
						if diff := cmp.Diff(wantPod, ps.Template.Spec.ResourceClaims); diff != "" {
							t.Errorf("PodSet %s: pod resourceClaims (-want +got):\n%s", ps.Name, diff)
						}
						for _, c := range ps.Template.Spec.Containers {
							want := []corev1.ResourceClaim{{Name: "gpus"}}
							if job.Spec.Trainer != nil && job.Spec.Trainer.ResourcesPerNode != nil && c.Name == podsets.NodeName && takesResourcesPerNode(string(ps.Name), rn) {
								want = nil
							}
							if diff := cmp.Diff(want, c.Resources.Claims); diff != "" {
								t.Errorf("PodSet %s container %s: resources.claims (-want +got):\n%s", ps.Name, c.Name, diff)
							}
						}
					}
				})
			}
		}
	}
}

// takesResourcesPerNode: Trainer writes resourcesPerNode into role's node
// container (the trainer step; MPI's node workers only with the launcher
// as a node, which these runtimes don't run).
func takesResourcesPerNode(role, runtime string) bool {
	if runtime == "MPI launcher and nodes" {
		return role == "launcher"
	}
	return role == "node"
}

// A role that claims an existing ResourceClaim by name is refused: Kueue
// does not count shared claims, so the job would run on devices no quota
// booked. The refusal names the role, the claim and the fix.
func TestASharedClaimIsRefusedNamingTheFix(t *testing.T) {
	rt := withClaims(runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer", replicas: 1}))
	rt.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimName: ptr.To("team-gpus")}}
	_, err := podsets.Build(jobWith(nil), rt, shape.PodTemplateOverrides{}, podsets.Options{})
	for _, want := range []string{`replicatedJob "node"`, `ResourceClaim "team-gpus"`, "resourceClaims[gpus].resourceClaimName", "resourceClaimTemplateName"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}

// Kueue's topology-aware scheduling does not place DRA devices
// (kueue#10548): a role asking for a topology and claiming devices is
// refused, naming the fix; without a topology annotation, or without TAS,
// the claims pass.
func TestTopologyAndDRAClaimsAreRefusedTogether(t *testing.T) {
	with := func(annotations map[string]string) *trainer.TrainingRuntimeSpec {
		return withClaims(runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer", replicas: 1, annotations: annotations}))
	}
	for name, tc := range map[string]struct {
		rt     *trainer.TrainingRuntimeSpec
		opts   podsets.Options
		refuse bool
	}{
		"required topology":              {rt: with(map[string]string{kueue.PodSetRequiredTopologyAnnotation: "rack"}), opts: podsets.Options{Topology: discovery.KueueTopology()}, refuse: true},
		"unconstrained topology":         {rt: with(map[string]string{kueue.PodSetUnconstrainedTopologyAnnotation: "true"}), opts: podsets.Options{Topology: discovery.KueueTopology()}, refuse: true},
		"no topology annotation, TAS on": {rt: with(nil), opts: podsets.Options{Topology: discovery.KueueTopology()}},
		"TAS off":                        {rt: with(map[string]string{kueue.PodSetRequiredTopologyAnnotation: "rack"})},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := podsets.Build(jobWith(nil), tc.rt, shape.PodTemplateOverrides{}, tc.opts)
			if tc.refuse != (err != nil) || (err != nil && !strings.Contains(err.Error(), "kueue#10548")) {
				t.Errorf("error %v, want refused %v naming kueue#10548", err, tc.refuse)
			}
		})
	}
}
