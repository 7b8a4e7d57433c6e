package webhook

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainjob-kueue/trainjob-kueue/gang"
	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// cachedGroups is a groupCache holding groups once synced.
type cachedGroups struct {
	synced bool
	held   map[string]*metav1.PartialObjectMetadata
}

func (c cachedGroups) group(_ context.Context, key client.ObjectKey) (*metav1.PartialObjectMetadata, bool) {
	pg, ok := c.held[key.Name]
	return pg, c.synced && ok
}

// A gang's pods after the cache has seen their group cost no read of it:
// the cache accepts a group it holds as the pod's job's, for its wave.
// Whatever else it says (not synced, not held, held as another job's) is
// asked of the API server before a pod is refused or let in: a cache that
// lags never refuses a job's pod, and never admits a forger.
func TestTheCacheOnlyAcceptsAGroupALiveReadDecidesTheRest(t *testing.T) {
	const group = "llama-184174"
	made := func(uid types.UID) *unstructured.Unstructured {
		p := gang.Plan{Name: group, Roles: []string{"node"}, WorkloadAPI: true, Admission: "184174"}
		p.Gang.MinMember = 2
		return gang.WorkloadAPIGroup(p, &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "llama", UID: uid}}, "")
	}
	groupOf := func(uid types.UID) *metav1.PartialObjectMetadata {
		u := made(uid)
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: group,
			Labels: u.GetLabels(), Annotations: u.GetAnnotations(), OwnerReferences: u.GetOwnerReferences()}}
	}
	gangPod := func(f family) *corev1.Pod {
		p := f.pod.DeepCopy()
		p.Labels[names.PodGroupLabel] = group
		return p
	}
	namingPod := func(f family) *corev1.Pod {
		p := f.pod.DeepCopy()
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
		return p
	}
	forged := func(family) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "forged"},
			Spec: corev1.PodSpec{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To(group)}}}
	}
	for name, tc := range map[string]struct {
		pod       func(family) *corev1.Pod
		cache     cachedGroups
		liveReads int
		refused   string
	}{
		"a gang pod whose group the cache holds": {
			pod: gangPod, cache: cachedGroups{synced: true, held: map[string]*metav1.PartialObjectMetadata{group: groupOf("tj-uid")}},
		},
		"a pod naming its job's group the cache holds": {
			pod: namingPod, cache: cachedGroups{synced: true, held: map[string]*metav1.PartialObjectMetadata{group: groupOf("tj-uid")}},
		},
		"a gang pod before the cache has synced": {
			pod: gangPod, cache: cachedGroups{held: map[string]*metav1.PartialObjectMetadata{group: groupOf("tj-uid")}}, liveReads: 1,
		},
		"a gang pod whose group the cache has not seen yet": {
			pod: gangPod, cache: cachedGroups{synced: true}, liveReads: 1,
		},
		"a gang pod whose group the cache holds as another job's (it lags)": {
			pod: gangPod, cache: cachedGroups{synced: true, held: map[string]*metav1.PartialObjectMetadata{group: groupOf("older-uid")}}, liveReads: 1,
		},
		"a forger's pod naming a group the cache holds": {
			pod: forged, cache: cachedGroups{synced: true, held: map[string]*metav1.PartialObjectMetadata{group: groupOf("tj-uid")}}, liveReads: 1,
			refused: "only that job's own pods",
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFamily()
			f.job.Labels = map[string]string{jobsetapi.ReplicatedJobNameKey: "node"}
			live := made("tj-uid")
			reads := 0
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(append(f.objects(), live)...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if obj.GetObjectKind().GroupVersionKind().Kind == "PodGroup" {
						reads++
					}
					return c.Get(ctx, key, obj, opts...)
				}}).Build()
			pod := tc.pod(f)
			err := (&Pods{lineage: lineage{cached: c, live: c, groups: tc.cache}}).Default(t.Context(), pod)
			if reads != tc.liveReads {
				t.Errorf("%d live reads of the group, want %d", reads, tc.liveReads)
			}
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("Default = %v, want a refusal saying %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got := ptr.Deref(pod.Spec.SchedulingGroup, corev1.PodSchedulingGroup{}).PodGroupName; ptr.Deref(got, "") != group {
				t.Errorf("the pod is in group %v, want %s", got, group)
			}
		})
	}
}
