package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/integration"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A TrainJob's pod that Kueue's pod webhook took to queue (a default
// LocalQueue) is given back exactly as it was: no managed label, finalizer,
// role hash or admission gate; the topology gate only stays when the job's
// own admission asked for it. Other pods are Kueue's.
func TestATrainJobsPodIsNeverQueuedOnItsOwn(t *testing.T) {
	job := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: "u"}}
	wlOf := func(tas bool) *kueue.Workload {
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: jobframework.GetWorkloadNameForOwnerWithGVK(job.Name, job.UID, trainjob.GVK),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: trainjob.GVK.GroupVersion().String(), Kind: trainjob.GVK.Kind, Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}}}
		wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "node"}}}
		if tas {
			wl.Status.Admission.PodSetAssignments[0].TopologyAssignment = &kueue.TopologyAssignment{Levels: []string{"kubernetes.io/hostname"}}
		}
		return wl
	}
	taken := func(jobSet string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "p",
				Labels:      map[string]string{"jobset.sigs.k8s.io/jobset-name": jobSet, "kueue.x-k8s.io/queue-name": "default", "kueue.x-k8s.io/managed": "true", "app": "x"},
				Annotations: map[string]string{"kueue.x-k8s.io/role-hash": "abc", "note": "kept"},
				Finalizers:  []string{"kueue.x-k8s.io/managed", "other"}},
			Spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/admission"}, {Name: "kueue.x-k8s.io/topology"}, {Name: "user.example/gate"}}},
		}
	}
	given := func(gates ...string) *corev1.Pod {
		p := taken("j")
		p.Labels = map[string]string{"jobset.sigs.k8s.io/jobset-name": "j", "kueue.x-k8s.io/queue-name": "default", "app": "x"}
		p.Annotations = map[string]string{"note": "kept"}
		p.Finalizers = []string{"other"}
		p.Spec.SchedulingGates = nil
		for _, g := range gates {
			p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: g})
		}
		return p
	}
	for name, tc := range map[string]struct {
		pod     *corev1.Pod
		objs    []client.Object
		standby bool
		want    *corev1.Pod
	}{
		"a TrainJob's pod, admitted without topology": {pod: taken("j"), objs: []client.Object{job, wlOf(false)}, want: given("user.example/gate")},
		"a TrainJob's pod, admitted with topology":    {pod: taken("j"), objs: []client.Object{job, wlOf(true)}, want: given("kueue.x-k8s.io/topology", "user.example/gate")},
		"a JobSet of no TrainJob: Kueue's":            {pod: taken("other"), objs: []client.Object{job}, want: taken("other")},
		"standing by: the built-in skips it itself":   {pod: taken("j"), objs: []client.Object{job}, standby: true, want: taken("j")},
	} {
		t.Run(name, func(t *testing.T) {
			opts := integration.Options{}
			opts.BuiltInTrainJob = tc.standby
			w := &Pods{client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tc.objs...).Build(), opts: opts}
			pod := tc.pod.DeepCopy()
			if err := w.Default(t.Context(), pod); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, pod); diff != "" {
				t.Errorf("pod (-want +got):\n%s", diff)
			}
		})
	}
}
