package podsets_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

type rj struct {
	name        string
	ancestor    string
	parallelism *int32
	indexed     bool
	replicas    int32
	container   string
	requests    corev1.ResourceList
	priority    string
	annotations map[string]string
	tolerations []corev1.Toleration
	selector    map[string]string
}

func runtimeOf(policy *trainer.MLPolicy, jobs ...rj) *trainer.TrainingRuntimeSpec {
	spec := &trainer.TrainingRuntimeSpec{MLPolicy: policy}
	for _, j := range jobs {
		container := j.container
		if container == "" {
			container = "node"
		}
		r := jobset.ReplicatedJob{
			Name:     j.name,
			Replicas: j.replicas,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Parallelism: j.parallelism,
				CompletionMode: func() *batchv1.CompletionMode {
					if j.indexed {
						return ptr.To(batchv1.IndexedCompletion)
					}
					return nil
				}(),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: j.annotations},
					Spec: corev1.PodSpec{
						PriorityClassName: j.priority,
						Tolerations:       j.tolerations,
						NodeSelector:      j.selector,
						Containers: []corev1.Container{{
							Name: container, Image: "img",
							Resources: corev1.ResourceRequirements{Requests: j.requests},
						}},
					},
				},
			}},
		}
		if j.ancestor != "" {
			r.Template.Labels = map[string]string{podsets.AncestorLabel: j.ancestor}
		}
		spec.Template.Spec.ReplicatedJobs = append(spec.Template.Spec.ReplicatedJobs, r)
	}
	return spec
}

func torch(numNodes *int32) *trainer.MLPolicy {
	return &trainer.MLPolicy{NumNodes: numNodes, MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}}
}

func mpi(numNodes *int32, launcherAsNode bool) *trainer.MLPolicy {
	return &trainer.MLPolicy{NumNodes: numNodes, MLPolicySource: trainer.MLPolicySource{MPI: &trainer.MPIMLPolicySource{RunLauncherAsNode: ptr.To(launcherAsNode)}}}
}

func jobWith(f func(*trainjob.TrainJob)) *trainjob.TrainJob {
	j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns"}}
	if f != nil {
		f(j)
	}
	return j
}

func numNodes(n int32) func(*trainjob.TrainJob) {
	return func(j *trainjob.TrainJob) { j.Spec.Trainer = &trainjob.Trainer{NumNodes: ptr.To(n)} }
}

func perNode(requests corev1.ResourceList) func(*trainjob.TrainJob) {
	return func(j *trainjob.TrainJob) {
		j.Spec.Trainer = &trainjob.Trainer{ResourcesPerNode: &corev1.ResourceRequirements{Requests: requests}}
	}
}

func TestFractionsOfNativeResourcesAreFine(t *testing.T) {
	requests := corev1.ResourceList{
		"cpu": resource.MustParse("500m"), "memory": resource.MustParse("1.5Gi"),
		"hugepages-2Mi": resource.MustParse("0"), "nvidia.com/gpu": resource.MustParse("2"),
	}
	_, err := podsets.Build(jobWith(perNode(requests)), runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer", requests: requests}), shape.PodTemplateOverrides{}, podsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
}

func gpu(n int64) corev1.ResourceList {
	return corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(n, resource.DecimalSI)}
}

type count struct {
	Name  string
	Count int32
}

func counts(ps []kueue.PodSet) []count {
	out := make([]count, len(ps))
	for i := range ps {
		out[i] = count{string(ps[i].Name), ps[i].Count}
	}
	return out
}

func TestCounts(t *testing.T) {
	initializers := []rj{
		{name: "dataset-initializer", ancestor: "dataset-initializer", replicas: 2, container: "dataset-initializer"},
		{name: "model-initializer", ancestor: "model-initializer", container: "model-initializer"},
	}
	cases := map[string]struct {
		job     *trainjob.TrainJob
		runtime *trainer.TrainingRuntimeSpec
		want    []count
	}{
		"torch: mlPolicy.numNodes is the trainer's base count": {
			job:     jobWith(nil),
			runtime: runtimeOf(torch(ptr.To[int32](2)), rj{name: "node", ancestor: "trainer"}),
			want:    []count{{"node", 2}},
		},
		"torch: mlPolicy without numNodes defaults to one node": {
			job:     jobWith(nil),
			runtime: runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer", parallelism: ptr.To[int32](5)}),
			want:    []count{{"node", 1}},
		},
		"torch: the TrainJob's numNodes wins": {
			job:     jobWith(numNodes(3)),
			runtime: runtimeOf(torch(ptr.To[int32](2)), rj{name: "node", ancestor: "trainer"}),
			want:    []count{{"node", 3}},
		},
		"plain: no mlPolicy, parallelism is the count": {
			job:     jobWith(nil),
			runtime: runtimeOf(nil, rj{name: "trainer", ancestor: "trainer", parallelism: ptr.To[int32](2)}),
			want:    []count{{"trainer", 2}},
		},
		"plain: numNodes replaces parallelism of the trainer step only": {
			job: jobWith(numNodes(4)),
			runtime: runtimeOf(nil,
				rj{name: "trainer", ancestor: "trainer", parallelism: ptr.To[int32](2)},
				rj{name: "sidecar-job", parallelism: ptr.To[int32](2)}),
			want: []count{{"trainer", 4}, {"sidecar-job", 2}},
		},
		"mpi: numNodes goes to the node job, the launcher keeps mlPolicy.numNodes": {
			job: jobWith(numNodes(4)),
			runtime: runtimeOf(mpi(ptr.To[int32](1), false),
				rj{name: "launcher", ancestor: "trainer"},
				rj{name: "node"}),
			want: []count{{"launcher", 1}, {"node", 4}},
		},
		"mpi: runLauncherAsNode gives one node to the launcher": {
			job: jobWith(numNodes(4)),
			runtime: runtimeOf(mpi(ptr.To[int32](1), true),
				rj{name: "launcher", ancestor: "trainer"},
				rj{name: "node"}),
			want: []count{{"launcher", 1}, {"node", 3}},
		},
		"mpi: runLauncherAsNode with one node keeps at least one worker": {
			job: jobWith(numNodes(1)),
			runtime: runtimeOf(mpi(ptr.To[int32](1), true),
				rj{name: "launcher", ancestor: "trainer"},
				rj{name: "node", parallelism: ptr.To[int32](7)}),
			want: []count{{"launcher", 1}, {"node", 1}},
		},
		"mpi: without numNodes the node job keeps its parallelism": {
			job: jobWith(nil),
			runtime: runtimeOf(mpi(ptr.To[int32](2), false),
				rj{name: "launcher", ancestor: "trainer"},
				rj{name: "node", parallelism: ptr.To[int32](3)}),
			want: []count{{"launcher", 2}, {"node", 3}},
		},
		"initializers: one replica each, whatever the runtime declares": {
			job:     jobWith(numNodes(2)),
			runtime: runtimeOf(torch(nil), append(initializers, rj{name: "node", ancestor: "trainer"})...),
			want:    []count{{"dataset-initializer", 1}, {"model-initializer", 1}, {"node", 2}},
		},
		"parallelism 0 runs one pod, as Trainer rewrites it": {
			job: jobWith(nil),
			runtime: runtimeOf(nil,
				rj{name: "trainer", ancestor: "trainer", parallelism: ptr.To[int32](0)},
				rj{name: "sidecar-job", replicas: 2, parallelism: ptr.To[int32](0)}),
			want: []count{{"trainer", 1}, {"sidecar-job", 2}},
		},
		"mlPolicy.numNodes 0 runs one node": {
			job:     jobWith(nil),
			runtime: runtimeOf(torch(ptr.To[int32](0)), rj{name: "node", ancestor: "trainer"}),
			want:    []count{{"node", 1}},
		},
		"custom job: replicas × parallelism": {
			job: jobWith(nil),
			runtime: runtimeOf(torch(nil),
				rj{name: "node", ancestor: "trainer"},
				rj{name: "evaluator", replicas: 2, parallelism: ptr.To[int32](3)}),
			want: []count{{"node", 1}, {"evaluator", 6}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := podsets.Build(tc.job, tc.runtime, shape.PodTemplateOverrides{}, podsets.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, counts(got)); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	cases := map[string]struct {
		job     *trainjob.TrainJob
		runtime *trainer.TrainingRuntimeSpec
		want    string
	}{
		"no replicatedJobs": {
			job: jobWith(nil), runtime: runtimeOf(torch(nil)), want: "no replicatedJobs",
		},
		"numNodes zero": {
			job: jobWith(numNodes(0)), runtime: runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer"}), want: "spec.trainer.numNodes",
		},
		"negative cpu in resourcesPerNode": {
			job:     jobWith(perNode(corev1.ResourceList{"cpu": resource.MustParse("-2")})),
			runtime: runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer"}),
			want:    "spec.trainer.resourcesPerNode.requests cpu is -2: quantities must not be negative",
		},
		"half a GPU in resourcesPerNode": {
			job:     jobWith(perNode(corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("0.5")})),
			runtime: runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer"}),
			want:    "spec.trainer.resourcesPerNode.requests nvidia.com/gpu is 500m: extended resources take whole numbers",
		},
		"negative memory in the runtime": {
			job:     jobWith(nil),
			runtime: runtimeOf(nil, rj{name: "evaluator", requests: corev1.ResourceList{"memory": resource.MustParse("-1Gi")}}),
			want:    `replicatedJob "evaluator" container "node" requests memory is -1Gi`,
		},
		"a fraction of an extended resource in the runtime": {
			job:     jobWith(nil),
			runtime: runtimeOf(nil, rj{name: "evaluator", requests: corev1.ResourceList{"example.com/fpga": resource.MustParse("1.5")}}),
			want:    "extended resources take whole numbers",
		},
		"pod count overflows": {
			job:     jobWith(nil),
			runtime: runtimeOf(nil, rj{name: "huge", replicas: 1 << 20, parallelism: ptr.To[int32](1 << 20)}),
			want:    "more than a PodSet can hold",
		},
		"pods of all roles overflow a gang": {
			job: jobWith(nil),
			runtime: runtimeOf(nil, rj{name: "a", replicas: 1 << 15, parallelism: ptr.To[int32](1 << 15)},
				rj{name: "b", replicas: 1 << 15, parallelism: ptr.To[int32](1 << 15)}),
			want: "more than Kubernetes can count in one gang",
		},
		"numNodes beyond an Indexed Job's parallelism": {
			job:     jobWith(numNodes(1 << 20)),
			runtime: runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer", indexed: true}),
			want:    `replicatedJob "node" would run 1048576 pods in one Indexed Job: Kubernetes allows at most 100000`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := podsets.Build(tc.job, tc.runtime, shape.PodTemplateOverrides{}, podsets.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := podsets.Build(jobWith(nil), runtimeOf(nil), shape.PodTemplateOverrides{}, podsets.Options{}); !errors.Is(err, podsets.ErrNoReplicatedJobs) {
		t.Errorf("want ErrNoReplicatedJobs, got %v", err)
	}
}

func TestTrainerFields(t *testing.T) {
	res := &corev1.ResourceRequirements{Requests: gpu(8), Limits: gpu(8)}
	cases := map[string]struct {
		runtime *trainer.TrainingRuntimeSpec
		// want: per replicatedJob, the node container's GPU request (-1: none)
		want map[string]int64
	}{
		"torch: resourcesPerNode replaces the trainer node's resources": {
			runtime: runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer", requests: gpu(1)}),
			want:    map[string]int64{"node": 8},
		},
		"mpi: only the launcher gets resourcesPerNode without runLauncherAsNode": {
			runtime: runtimeOf(mpi(nil, false), rj{name: "launcher", ancestor: "trainer"}, rj{name: "node", requests: gpu(1)}),
			want:    map[string]int64{"launcher": 8, "node": 1},
		},
		"mpi: with runLauncherAsNode the node workers get it too": {
			runtime: runtimeOf(mpi(nil, true), rj{name: "launcher", ancestor: "trainer"}, rj{name: "node", requests: gpu(1)}),
			want:    map[string]int64{"launcher": 8, "node": 8},
		},
		"initializers never get it": {
			runtime: runtimeOf(torch(nil),
				rj{name: "dataset-initializer", ancestor: "dataset-initializer", container: "node"},
				rj{name: "node", ancestor: "trainer"}),
			want: map[string]int64{"dataset-initializer": -1, "node": 8},
		},
	}
	job := jobWith(func(j *trainjob.TrainJob) {
		j.Spec.Trainer = &trainjob.Trainer{ResourcesPerNode: res, Image: ptr.To("custom:1"), Command: []string{"torchrun"}, Args: []string{"train.py"}}
	})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := podsets.Build(job, tc.runtime, shape.PodTemplateOverrides{}, podsets.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, ps := range got {
				c := ps.Template.Spec.Containers[0]
				q, ok := c.Resources.Requests["nvidia.com/gpu"]
				have := int64(-1)
				if ok {
					have = q.Value()
				}
				if want := tc.want[string(ps.Name)]; have != want {
					t.Errorf("%s: GPU request %d, want %d", ps.Name, have, want)
				}
				trainerStep := tc.runtime.Template.Spec.ReplicatedJobs[indexOf(got, ps.Name)].Template.Labels[podsets.AncestorLabel] == "trainer"
				if trainerStep != (c.Image == "custom:1") {
					t.Errorf("%s: image %q (trainer step: %v)", ps.Name, c.Image, trainerStep)
				}
				if trainerStep && (cmp.Diff([]string{"torchrun"}, c.Command) != "" || cmp.Diff([]string{"train.py"}, c.Args) != "") {
					t.Errorf("%s: command %v args %v", ps.Name, c.Command, c.Args)
				}
			}
		})
	}
}

func indexOf(ps []kueue.PodSet, name kueue.PodSetReference) int {
	for i := range ps {
		if ps[i].Name == name {
			return i
		}
	}
	return -1
}

func TestUserOverridesAreAppliedLikeTrainerDoes(t *testing.T) {
	runtimeTol := corev1.Toleration{Key: "runtime", Operator: corev1.TolerationOpExists}
	userTol := corev1.Toleration{Key: "user", Operator: corev1.TolerationOpExists}
	rt := runtimeOf(torch(nil),
		rj{name: "dataset-initializer", ancestor: "dataset-initializer", container: "dataset-initializer", tolerations: []corev1.Toleration{runtimeTol}, selector: map[string]string{"disk": "ssd"}},
		rj{name: "node", ancestor: "trainer", tolerations: []corev1.Toleration{runtimeTol}, selector: map[string]string{"disk": "ssd"}})
	job := jobWith(func(j *trainjob.TrainJob) {
		j.Spec.PodTemplateOverrides = []trainjob.PodTemplateOverride{
			{
				TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}},
				Metadata:   &metav1.ObjectMeta{Labels: map[string]string{"team": "nlp"}},
				Spec: &trainjob.PodTemplateSpecOverride{
					NodeSelector: map[string]string{"zone": "z1"},
					Tolerations:  []corev1.Toleration{userTol},
				},
			},
			{
				// Injected at an earlier admission (Kueue in-tree's marker):
				// not the user's, not part of the PodSets.
				TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}},
				Metadata:   &metav1.ObjectMeta{Labels: map[string]string{names.InTreePodSetLabel: "node"}},
				Spec:       &trainjob.PodTemplateSpecOverride{NodeSelector: map[string]string{"flavor": "x"}},
			},
			{
				TargetJobs: []trainjob.PodTemplateOverrideTargetJob{{Name: "node"}},
				Metadata:   &metav1.ObjectMeta{Labels: map[string]string{names.OwnedLabel: "true"}},
				Spec:       &trainjob.PodTemplateSpecOverride{NodeSelector: map[string]string{"flavor": "y"}},
			},
		}
	})
	got, err := podsets.Build(job, rt, shape.PodTemplateOverrides{}, podsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	node := got[1].Template
	// Strategic merge: nodeSelector merges per key, tolerations are replaced.
	if diff := cmp.Diff(map[string]string{"disk": "ssd", "zone": "z1"}, node.Spec.NodeSelector); diff != "" {
		t.Errorf("node selector (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.Toleration{userTol}, node.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
	if node.Labels["team"] != "nlp" {
		t.Errorf("labels %v", node.Labels)
	}
	init := got[0].Template
	if diff := cmp.Diff([]corev1.Toleration{runtimeTol}, init.Spec.Tolerations); diff != "" {
		t.Errorf("an override for node changed the initializer (-want +got):\n%s", diff)
	}
}

func TestPriorityClassIsTheTrainers(t *testing.T) {
	rt := runtimeOf(torch(nil),
		rj{name: "dataset-initializer", ancestor: "dataset-initializer", priority: "low"},
		rj{name: "node", ancestor: "trainer", priority: "high"})
	roles, err := podsets.Roles(jobWith(nil), rt, shape.PodTemplateOverrides{})
	if err != nil {
		t.Fatal(err)
	}
	if got := podsets.PriorityClass(roles); got != "high" {
		t.Errorf("priority class %q, want the trainer's (high)", got)
	}
	rt = runtimeOf(torch(nil), rj{name: "dataset-initializer", ancestor: "dataset-initializer", priority: "low"}, rj{name: "node", ancestor: "trainer"})
	roles, _ = podsets.Roles(jobWith(nil), rt, shape.PodTemplateOverrides{})
	if got := podsets.PriorityClass(roles); got != "low" {
		t.Errorf("priority class %q, want the only one set (low)", got)
	}
}

func TestTopologyRequests(t *testing.T) {
	rt := runtimeOf(torch(nil),
		rj{name: "node", ancestor: "trainer", annotations: map[string]string{kueue.PodSetRequiredTopologyAnnotation: "cloud.provider.com/rack"}},
		rj{name: "evaluator", replicas: 2, annotations: map[string]string{kueue.PodSetPreferredTopologyAnnotation: "zone"}},
		rj{name: "sliced", parallelism: ptr.To[int32](4), annotations: map[string]string{
			kueue.PodSetRequiredTopologyAnnotation: "block", kueue.PodSetSliceRequiredTopologyAnnotation: "rack", kueue.PodSetSliceSizeAnnotation: "4",
		}},
		rj{name: "anywhere", annotations: map[string]string{kueue.PodSetUnconstrainedTopologyAnnotation: "true"}},
		rj{name: "grouped", annotations: map[string]string{kueue.PodSetRequiredTopologyAnnotation: "block", kueue.PodSetGroupName: "together"}})
	got, err := podsets.Build(jobWith(nil), rt, shape.PodTemplateOverrides{}, podsets.Options{Topology: discovery.KueueTopology()})
	if err != nil {
		t.Fatal(err)
	}
	want := []*kueue.PodSetTopologyRequest{
		{Required: ptr.To("cloud.provider.com/rack"), PodIndexLabel: ptr.To(batchv1.JobCompletionIndexAnnotation), SubGroupIndexLabel: ptr.To(jobset.JobIndexKey), SubGroupCount: ptr.To[int32](1)},
		{Preferred: ptr.To("zone"), PodIndexLabel: ptr.To(batchv1.JobCompletionIndexAnnotation), SubGroupIndexLabel: ptr.To(jobset.JobIndexKey), SubGroupCount: ptr.To[int32](2)},
		{
			Required: ptr.To("block"), PodSetSliceRequiredTopology: ptr.To("rack"), PodSetSliceSize: ptr.To[int32](4),
			PodIndexLabel: ptr.To(batchv1.JobCompletionIndexAnnotation), SubGroupIndexLabel: ptr.To(jobset.JobIndexKey), SubGroupCount: ptr.To[int32](1),
		},
		{Unconstrained: ptr.To(true), PodIndexLabel: ptr.To(batchv1.JobCompletionIndexAnnotation), SubGroupIndexLabel: ptr.To(jobset.JobIndexKey), SubGroupCount: ptr.To[int32](1)},
		{Required: ptr.To("block"), PodSetGroupName: ptr.To("together"), PodIndexLabel: ptr.To(batchv1.JobCompletionIndexAnnotation), SubGroupIndexLabel: ptr.To(jobset.JobIndexKey), SubGroupCount: ptr.To[int32](1)},
	}
	if len(got) != len(want) {
		t.Fatalf("%d PodSets, want %d", len(got), len(want))
	}
	for i := range got {
		if diff := cmp.Diff(want[i], got[i].TopologyRequest); diff != "" {
			t.Errorf("%s topology request (-want +got):\n%s", got[i].Name, diff)
		}
	}
	got, _ = podsets.Build(jobWith(nil), rt, shape.PodTemplateOverrides{}, podsets.Options{})
	if got[0].TopologyRequest != nil {
		t.Errorf("topology request without TAS: %v", got[0].TopologyRequest)
	}
	bad := runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer", annotations: map[string]string{
		kueue.PodSetRequiredTopologyAnnotation: "block", kueue.PodSetSliceRequiredTopologyAnnotation: "rack", kueue.PodSetSliceSizeAnnotation: "four",
	}})
	if _, err := podsets.Build(jobWith(nil), bad, shape.PodTemplateOverrides{}, podsets.Options{Topology: discovery.KueueTopology()}); err == nil || !strings.Contains(err.Error(), `replicatedJob "node"`) {
		t.Errorf("a slice size that is no number: want an error naming the replicatedJob, got %v", err)
	}
}

// Kueue's own webhooks refuse these on the jobs they know (its TrainJob
// cases "invalid topology request", "slice size larger than number of
// podsets"); we refuse them too, naming the annotation.
func TestTopologyRequestsKueueRefuses(t *testing.T) {
	cases := map[string]struct {
		job  rj
		want string
	}{
		"required and preferred": {
			job:  rj{name: "node", ancestor: "trainer", annotations: map[string]string{kueue.PodSetRequiredTopologyAnnotation: "rack", kueue.PodSetPreferredTopologyAnnotation: "block"}},
			want: "must not contain more than one topology annotation",
		},
		"slice larger than the PodSet": {
			job: rj{name: "node", ancestor: "trainer", parallelism: ptr.To[int32](2), annotations: map[string]string{
				kueue.PodSetRequiredTopologyAnnotation: "block", kueue.PodSetSliceRequiredTopologyAnnotation: "rack", kueue.PodSetSliceSizeAnnotation: "3",
			}},
			want: "must not be greater than pod set count 2",
		},
		"not a label name": {
			job:  rj{name: "node", ancestor: "trainer", annotations: map[string]string{kueue.PodSetRequiredTopologyAnnotation: "not a label!"}},
			want: kueue.PodSetRequiredTopologyAnnotation,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := podsets.Build(jobWith(nil), runtimeOf(nil, tc.job), shape.PodTemplateOverrides{}, podsets.Options{Topology: discovery.KueueTopology()})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `replicatedJob "node"`) {
				t.Fatalf("error %v, want one naming the replicatedJob and containing %q", err, tc.want)
			}
		})
	}
}

// release is the v2.1 override field with another release's rules.
type release struct {
	shape.PodTemplateOverrides
	rules podsets.Rules
}

func (r release) Rules() podsets.Rules { return r.rules }

func TestResourcesPerNodeByRelease(t *testing.T) {
	v20 := podsets.Rules{}
	v21 := podsets.Rules{LauncherAsNodeWorkersGetResources: true}
	v23 := podsets.Rules{LauncherAsNodeWorkersGetResources: true, ResourcesPerNodeMerges: true, ResourcesPerNodeNeedsMLPolicy: true}
	withRes := func(r *corev1.ResourceRequirements) *trainjob.TrainJob {
		return jobWith(func(j *trainjob.TrainJob) { j.Spec.Trainer = &trainjob.Trainer{ResourcesPerNode: r} })
	}
	gpuOnly := &corev1.ResourceRequirements{Requests: gpu(8)}
	base := corev1.ResourceList{"cpu": resource.MustParse("4"), "nvidia.com/gpu": resource.MustParse("1")}
	cases := map[string]struct {
		rules   podsets.Rules
		runtime *trainer.TrainingRuntimeSpec
		want    map[string]corev1.ResourceList
	}{
		"before v2.3 resourcesPerNode replaces the container's requests": {
			rules:   v21,
			runtime: runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer", requests: base}),
			want:    map[string]corev1.ResourceList{"node": gpu(8)},
		},
		"v2.3 merges per resource": {
			rules:   v23,
			runtime: runtimeOf(torch(nil), rj{name: "node", ancestor: "trainer", requests: base}),
			want:    map[string]corev1.ResourceList{"node": {"cpu": resource.MustParse("4"), "nvidia.com/gpu": resource.MustParse("8")}},
		},
		"v2.3 ignores it without an mlPolicy": {
			rules:   v23,
			runtime: runtimeOf(nil, rj{name: "node", ancestor: "trainer", requests: base}),
			want:    map[string]corev1.ResourceList{"node": base},
		},
		"v2.0 leaves MPI workers alone with runLauncherAsNode": {
			rules:   v20,
			runtime: runtimeOf(mpi(nil, true), rj{name: "launcher", ancestor: "trainer"}, rj{name: "node", requests: base}),
			want:    map[string]corev1.ResourceList{"launcher": gpu(8), "node": base},
		},
		"v2.1 gives MPI workers resourcesPerNode with runLauncherAsNode": {
			rules:   v21,
			runtime: runtimeOf(mpi(nil, true), rj{name: "launcher", ancestor: "trainer"}, rj{name: "node", requests: base}),
			want:    map[string]corev1.ResourceList{"launcher": gpu(8), "node": gpu(8)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := podsets.Build(withRes(gpuOnly), tc.runtime, release{rules: tc.rules}, podsets.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, ps := range got {
				have := ps.Template.Spec.Containers[0].Resources.Requests
				if diff := cmp.Diff(tc.want[string(ps.Name)], have, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
					t.Errorf("%s requests (-want +got):\n%s", ps.Name, diff)
				}
			}
		})
	}
}

func TestMorePodSetsThanTheInstalledKueueAllows(t *testing.T) {
	var roles []rj
	for i := range 9 {
		roles = append(roles, rj{name: fmt.Sprintf("role-%d", i)})
	}
	rt := runtimeOf(nil, roles...)
	// Kueue v0.16 allows 8 PodSets: nine roles are refused, naming both numbers.
	_, err := podsets.Build(jobWith(nil), rt, shape.PodTemplateOverrides{}, podsets.Options{MaxPodSets: 8})
	var tooMany *podsets.TooManyPodSetsError
	if !errors.As(err, &tooMany) || tooMany.Roles != 9 || tooMany.Max != 8 {
		t.Fatalf("nine roles, at most 8 PodSets: want TooManyPodSetsError{9, 8}, got %v", err)
	}
	// Kueue v0.19 allows 18.
	got, err := podsets.Build(jobWith(nil), rt, shape.PodTemplateOverrides{}, podsets.Options{MaxPodSets: 18})
	if err != nil || len(got) != 9 {
		t.Fatalf("nine roles, at most 18 PodSets: got %d PodSets, %v", len(got), err)
	}
}
