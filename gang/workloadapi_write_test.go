package gang

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/trainjob-kueue/trainjob-kueue/names"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func writerJob() *trainjob.TrainJob {
	return &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "llm", UID: "job-uid"}}
}

func writerPlan(admission string) Plan {
	return Plan{Name: WorkloadAPIGroupName("llm", "node", true, admission), Roles: []string{"node"}, Gang: quota.Gang{MinMember: 4}, WorkloadAPI: true, Admission: admission}
}

// Create makes the group, takes the job's own as planned for made, and
// never takes what another put under the name.
func TestWorkloadAPIWriterCreateProvesWhatStandsUnderTheName(t *testing.T) {
	job := writerJob()
	want := WorkloadAPIGroup(writerPlan("abc123"), job, "")
	other := want.DeepCopy()
	other.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "squatter", UID: "cm-uid", Controller: ptr.To(true)}})
	stale := want.DeepCopy()
	_ = unstructured.SetNestedField(stale.Object, int64(2), "spec", "schedulingPolicy", "gang", "minCount")
	refused := apierrors.NewForbidden(schema.GroupResource{Group: "scheduling.k8s.io", Resource: "podgroups"}, want.GetName(), errors.New("denied"))
	for name, tc := range map[string]struct {
		there     *unstructured.Unstructured
		createErr error
		wantMade  bool
		wantClaim *Claim
		wantErr   error
	}{
		"nothing there: made":                 {wantMade: true},
		"the job's own, as planned: not made": {there: want},
		"another's: a claim error":            {there: other, wantClaim: ptr.To(ClaimSquatted)},
		"the job's in another form: stale":    {there: stale, wantClaim: ptr.To(ClaimStale)},
		"refused: the API server's answer":    {createErr: refused, wantErr: refused},
	} {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.New())
			if tc.there != nil {
				b = b.WithObjects(tc.there.DeepCopy())
			}
			if tc.createErr != nil {
				b = b.WithInterceptorFuncs(interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
					return tc.createErr
				}})
			}
			c := b.Build()
			var counted []string
			w := WorkloadAPIWriter{Client: c, Live: c, Count: func(a string) { counted = append(counted, a) }}
			made, err := w.Create(context.Background(), want)
			if made != tc.wantMade {
				t.Errorf("made = %v, want %v", made, tc.wantMade)
			}
			var claimErr *ClaimError
			switch {
			case tc.wantClaim != nil && (!errors.As(err, &claimErr) || claimErr.Claim != *tc.wantClaim):
				t.Errorf("error %v, want a claim error of claim %d", err, *tc.wantClaim)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("error %v, want %v", err, tc.wantErr)
			case tc.wantClaim == nil && tc.wantErr == nil && err != nil:
				t.Errorf("error %v, want none", err)
			}
			if wantCounted := map[bool][]string{true: {ActionCreated}}[tc.wantMade]; !cmp.Equal(counted, wantCounted) {
				t.Errorf("counted %v, want %v", counted, wantCounted)
			}
			if tc.there != nil {
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(WorkloadAPIGroupGVK)
				if err := c.Get(context.Background(), client.ObjectKeyFromObject(want), got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.there.Object["spec"], got.Object["spec"]); diff != "" || !cmp.Equal(tc.there.GetOwnerReferences(), got.GetOwnerReferences()) {
					t.Errorf("what stood under the name was changed (-there +now):\n%s", diff)
				}
			}
		})
	}
}

// Release deletes the groups of admissions that ended, keeps the running
// admission's and what is not the job's, and returns what it kept.
func TestWorkloadAPIWriterReleaseDeletesOnlyTheEndedAdmissionsGroups(t *testing.T) {
	job := writerJob()
	running := WorkloadAPIGroup(writerPlan("abc123"), job, "")
	ended := WorkloadAPIGroup(writerPlan("old999"), job, "")
	foreign := WorkloadAPIGroup(writerPlan("old888"), job, "")
	foreign.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "squatter", UID: "cm-uid", Controller: ptr.To(true)}})
	foreign.SetLabels(map[string]string{names.PodGroupJobLabel: job.Name})
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(running, ended, foreign).Build()
	// The fake client lists a kind outside its scheme as metadata only
	// once it has listed it unstructured.
	all := &unstructured.UnstructuredList{}
	all.SetGroupVersionKind(WorkloadAPIGroupGVK.GroupVersion().WithKind("PodGroupList"))
	if err := c.List(context.Background(), all); err != nil || len(all.Items) != 3 {
		t.Fatalf("the groups: %v (%d)", err, len(all.Items))
	}
	var counted []string
	w := WorkloadAPIWriter{Client: c, Live: c, Count: func(a string) { counted = append(counted, a) }}
	kept, err := w.Release(context.Background(), job, "abc123")
	if err != nil {
		t.Fatal(err)
	}
	var keptNames []string
	for _, pg := range kept {
		keptNames = append(keptNames, pg.Name)
	}
	if diff := cmp.Diff([]string{running.GetName(), foreign.GetName()}, keptNames); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	left := &metav1.PartialObjectMetadataList{}
	left.SetGroupVersionKind(WorkloadAPIGroupGVK.GroupVersion().WithKind("PodGroupList"))
	if err := c.List(context.Background(), left, client.InNamespace("ml")); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 2 || !cmp.Equal(counted, []string{ActionDeleted}) {
		t.Errorf("%d groups left, counted %v; want the ended one alone deleted", len(left.Items), counted)
	}
	if _, err := w.Release(context.Background(), job, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.List(context.Background(), left, client.InNamespace("ml")); err != nil || len(left.Items) != 1 || left.Items[0].Name != foreign.GetName() {
		t.Errorf("after the job finished: %v, %d groups left; want only the foreign one", err, len(left.Items))
	}
}
