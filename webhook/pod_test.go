package webhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A TrainJob's pod that Kueue's pod webhook took to queue (a default
// LocalQueue) is given back exactly as its Job made it: no managed label,
// finalizer, role hash, or admission and topology gates its Job's template
// does not carry (the topology gate stays when our start put it there: the
// admission placed the job by topology). A pod that only looks like a
// TrainJob's, by its labels or a forged owner, is Kueue's.
func TestATrainJobsPodIsNeverQueuedOnItsOwn(t *testing.T) {
	gates := func(names ...string) []corev1.PodSchedulingGate {
		var out []corev1.PodSchedulingGate
		for _, n := range names {
			out = append(out, corev1.PodSchedulingGate{Name: n})
		}
		return out
	}
	taken := func(f family) *corev1.Pod {
		p := f.pod.DeepCopy()
		p.Labels = map[string]string{"jobset.sigs.k8s.io/jobset-name": "llama", "kueue.x-k8s.io/queue-name": "default", "kueue.x-k8s.io/managed": "true", "app": "x"}
		p.Annotations = map[string]string{"kueue.x-k8s.io/role-hash": "abc", "note": "kept"}
		p.Finalizers = []string{"kueue.x-k8s.io/managed", "other"}
		p.Spec.SchedulingGates = gates("kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology", "user.example/gate")
		return p
	}
	given := func(f family, gateNames ...string) *corev1.Pod {
		p := taken(f)
		p.Labels = map[string]string{"jobset.sigs.k8s.io/jobset-name": "llama", "kueue.x-k8s.io/queue-name": "default", "app": "x"}
		p.Annotations = map[string]string{"note": "kept"}
		p.Finalizers = []string{"other"}
		p.Spec.SchedulingGates = gates(gateNames...)
		return p
	}
	for name, tc := range map[string]struct {
		edit func(*family)
		// notTaken: Kueue's pod webhook did not take the pod (no managed
		// label).
		notTaken bool
		want     func(family, *corev1.Pod) *corev1.Pod
	}{
		"a TrainJob's pod, started without topology": {
			edit: func(f *family) { f.job.Spec.Template.Spec.SchedulingGates = gates("user.example/gate") },
			want: func(f family, _ *corev1.Pod) *corev1.Pod { return given(f, "user.example/gate") },
		},
		"a TrainJob's pod, started with topology": {
			edit: func(f *family) {
				f.job.Spec.Template.Spec.SchedulingGates = gates("user.example/gate", "kueue.x-k8s.io/topology")
			},
			want: func(f family, _ *corev1.Pod) *corev1.Pod {
				return given(f, "kueue.x-k8s.io/topology", "user.example/gate")
			},
		},
		"labelled as a TrainJob's JobSet, no owner": {
			edit: func(f *family) { f.pod.OwnerReferences = nil },
			want: func(_ family, taken *corev1.Pod) *corev1.Pod { return taken },
		},
		"its Job's name, another UID": {
			edit: func(f *family) { f.pod.OwnerReferences[0].UID = "forged" },
			want: func(_ family, taken *corev1.Pod) *corev1.Pod { return taken },
		},
		"a Job of a JobSet of its own": {
			edit: func(f *family) { f.jobSet.OwnerReferences = nil },
			want: func(_ family, taken *corev1.Pod) *corev1.Pod { return taken },
		},
		"not taken by Kueue: nothing to do": {
			notTaken: true,
			want:     func(_ family, taken *corev1.Pod) *corev1.Pod { return taken },
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFamily()
			if tc.edit != nil {
				tc.edit(&f)
			}
			pod := taken(f)
			if tc.notTaken {
				pod.Labels = map[string]string{"jobset.sigs.k8s.io/jobset-name": "llama", "app": "x"}
			}
			want := tc.want(f, pod.DeepCopy())
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(f.objects()...).Build()
			if err := (&Pods{lineage: lineage{cached: c, live: c}}).Default(t.Context(), pod); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, pod); diff != "" {
				t.Errorf("pod (-want +got):\n%s", diff)
			}
		})
	}
}

// In gang mode workload-api a TrainJob's pod labelled for its wave's
// PodGroup joins it (spec.schedulingGroup) only when the group is one we
// made for that job, by UID, and for the pod's role; a pod of a gang that
// can't join is refused, naming the label: alone it could start while the
// rest of its gang can't. A pod that is not proven the job's is left as it
// is.
func TestAGangsPodJoinsOnlyItsOwnJobsPodGroup(t *testing.T) {
	group := func(name string, edit func(*gang.Plan, *trainjob.TrainJob)) client.Object {
		p := gang.Plan{Name: name, Roles: []string{"node"}, WorkloadAPI: true, Admission: "abc123"}
		p.Gang.MinMember = 2
		owner := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "llama", UID: "tj-uid"}}
		if edit != nil {
			edit(&p, owner)
		}
		return gang.WorkloadAPIGroup(p, owner, "")
	}
	for name, tc := range map[string]struct {
		edit    func(*family)
		groups  []client.Object
		label   string
		want    *string
		refused string
	}{
		"its job's group for its role": {
			groups: []client.Object{group("llama-abc123", nil)}, label: "llama-abc123", want: ptr.To("llama-abc123"),
		},
		"a group of another job of the namespace": {
			groups:  []client.Object{group("other-abc123", func(_ *gang.Plan, j *trainjob.TrainJob) { j.Name, j.UID = "other", "other-uid" })},
			label:   "other-abc123",
			refused: "not one trainjob-kueue made for this pod's TrainJob",
		},
		"its job's group of another wave": {
			groups:  []client.Object{group("llama.init-abc123", func(p *gang.Plan, _ *trainjob.TrainJob) { p.Roles = []string{"dataset-initializer"} })},
			label:   "llama.init-abc123",
			refused: `not for this pod's role "node"`,
		},
		"no such group": {label: "llama-gone", refused: "label trainjob-kueue.dev/pod-group"},
		"labelled, but not proven the job's (a forged owner)": {
			edit:   func(f *family) { f.pod.OwnerReferences[0].UID = "forged" },
			groups: []client.Object{group("llama-abc123", nil)}, label: "llama-abc123",
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFamily()
			f.job.Labels = map[string]string{jobsetapi.ReplicatedJobNameKey: "node"}
			if tc.edit != nil {
				tc.edit(&f)
			}
			pod := f.pod.DeepCopy()
			pod.Labels[names.PodGroupLabel] = tc.label
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(append(f.objects(), tc.groups...)...).Build()
			err := (&Pods{lineage: lineage{cached: c, live: c}}).Default(t.Context(), pod)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("Default = %v, want a refusal saying %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got *string
			if pod.Spec.SchedulingGroup != nil {
				got = pod.Spec.SchedulingGroup.PodGroupName
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("spec.schedulingGroup.podGroupName (-want +got):\n%s", diff)
			}
		})
	}
}
