package webhook

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A pod that names a PodGroup in spec.schedulingGroup is a member of its
// gang for kube-scheduler, whoever made it. It is let through only when
// the group is none of ours, or the pod is proven (by UID, hop by hop) a
// pod of the TrainJob that controls the group, of its wave; and a name
// our start would give a group of a TrainJob of the namespace, before the
// group exists, is that job's pods' alone. Each refusal names the field.
func TestAPodNamesAJobsPodGroupOnlyAsThatJobsPod(t *testing.T) {
	victim := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "victim", UID: "victim-uid"}}
	victimGroup := func() client.Object {
		p := gang.Plan{Name: "victim-184174", Roles: []string{"node"}, WorkloadAPI: true, Admission: "184174"}
		p.Gang.MinMember = 2
		return gang.WorkloadAPIGroup(p, victim, "")
	}
	foreignGroup := &unstructured.Unstructured{}
	foreignGroup.SetGroupVersionKind(gang.WorkloadAPIGroupGVK)
	foreignGroup.SetNamespace("team")
	foreignGroup.SetName("batch-team-gang")
	bare := func(group string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "forged"},
			Spec: corev1.PodSpec{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To(group)}}}
	}
	// ofFamily is a pod of the family's TrainJob (llama, tj-uid: its own
	// namespaced runtime's template names the group).
	ofFamily := func(f family, group string) *corev1.Pod {
		p := f.pod.DeepCopy()
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
		return p
	}
	for name, tc := range map[string]struct {
		pod     func(family) *corev1.Pod
		objects []client.Object
		refused string
	}{
		"a bare pod naming a running job's group": {
			pod: func(family) *corev1.Pod { return bare("victim-184174") }, objects: []client.Object{victimGroup(), victim},
			refused: "spec.schedulingGroup.podGroupName: PodGroup victim-184174 is the gang of TrainJob victim",
		},
		"a pod of another TrainJob (its runtime names the group)": {
			pod: func(f family) *corev1.Pod { return ofFamily(f, "victim-184174") }, objects: []client.Object{victimGroup(), victim},
			refused: "only that job's own pods",
		},
		"a bare pod naming a job's group before it is made": {
			pod: func(family) *corev1.Pod { return bare("victim-b14142") }, objects: []client.Object{victim},
			refused: "PodGroup victim-b14142 is the gang of TrainJob victim",
		},
		"a bare pod naming a wave's group before it is made": {
			pod: func(family) *corev1.Pod { return bare("victim.dataset-initializer-b14142") }, objects: []client.Object{victim},
			refused: "TrainJob victim",
		},
		"a job's own pod naming its group before it is made": {
			pod: func(f family) *corev1.Pod { return ofFamily(f, "llama-b14142") },
		},
		"a bare pod naming a group that is none of ours": {
			pod: func(family) *corev1.Pod { return bare("batch-team-gang") }, objects: []client.Object{foreignGroup, victim},
		},
		"a bare pod naming a name of no job of ours, not made": {
			pod: func(family) *corev1.Pod { return bare("victim") }, objects: []client.Object{victim},
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFamily()
			f.job.Labels = map[string]string{jobsetapi.ReplicatedJobNameKey: "node"}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(append(f.objects(), tc.objects...)...).Build()
			pod := tc.pod(f)
			err := (&Pods{lineage: lineage{cached: c, live: c}}).Default(t.Context(), pod)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("Default = %v, want a refusal saying %q", err, tc.refused)
			}
		})
	}
}

// Where the API server serves no Workload API PodGroups (a release or
// set-up without the Workload API), no group is ours: a pod naming one is
// none of our business, never refused for the failed read.
func TestAPodNamingAGroupWhereNoneIsServedIsLetThrough(t *testing.T) {
	f := newFamily()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(f.objects()...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if obj.GetObjectKind().GroupVersionKind().Kind == "PodGroup" {
				return &meta.NoKindMatchError{GroupKind: gang.WorkloadAPIGroupGVK.GroupKind(), SearchedVersions: []string{"v1beta1"}}
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "p"},
		Spec: corev1.PodSpec{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To("their-gang")}}}
	if err := (&Pods{lineage: lineage{cached: c, live: c}}).Default(t.Context(), pod); err != nil {
		t.Fatalf("refused: %v", err)
	}
}
