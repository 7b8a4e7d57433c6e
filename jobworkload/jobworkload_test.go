package jobworkload

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

func TestOfFindsTheJobsOwnWorkloadPrebuiltOrNamedByTheJobFramework(t *testing.T) {
	scheme := runtime.NewScheme()
	utilruntime.Must(kueue.AddToScheme(scheme))
	job := func(prebuilt string) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "j", UID: "uid"}}
		if prebuilt != "" {
			j.Labels = map[string]string{constants.PrebuiltWorkloadLabel: prebuilt}
		}
		return j
	}
	generated, _ := Key(job(""))
	owned := func(name, uid string) *kueue.Workload {
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}}
		if uid != "" {
			wl.OwnerReferences = []metav1.OwnerReference{{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "j", UID: "uid", Controller: ptr.To(true)}}
			wl.OwnerReferences[0].UID = types.UID(uid)
		}
		return wl
	}
	for name, tc := range map[string]struct {
		job   *trainjob.TrainJob
		wls   []client.Object
		found string
	}{
		"named by the job framework":           {job: job(""), wls: []client.Object{owned(generated.Name, "uid")}, found: generated.Name},
		"none yet":                             {job: job("")},
		"of that name, another job's":          {job: job(""), wls: []client.Object{owned(generated.Name, "other")}},
		"of that name, nobody's":               {job: job(""), wls: []client.Object{owned(generated.Name, "")}},
		"prebuilt, before the framework marks": {job: job("mk-wl"), wls: []client.Object{owned("mk-wl", "")}, found: "mk-wl"},
		"prebuilt, the job's":                  {job: job("mk-wl"), wls: []client.Object{owned("mk-wl", "uid")}, found: "mk-wl"},
		"prebuilt, another job's":              {job: job("mk-wl"), wls: []client.Object{owned("mk-wl", "other")}},
		"prebuilt, not created yet":            {job: job("mk-wl"), wls: []client.Object{owned(generated.Name, "uid")}},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.wls...).Build()
			wl, err := Of(t.Context(), c, tc.job)
			if err != nil {
				t.Fatal(err)
			}
			var listed []kueue.Workload
			for _, o := range tc.wls {
				listed = append(listed, *o.(*kueue.Workload))
			}
			// The read and the index of a list answer alike.
			for by, wl := range map[string]*kueue.Workload{"Of": wl, "Index.Of": NewIndex(listed).Of(tc.job)} {
				switch {
				case tc.found == "" && wl != nil:
					t.Errorf("%s found %s, want none", by, wl.Name)
				case tc.found != "" && (wl == nil || wl.Name != tc.found):
					t.Errorf("%s found %v, want %s", by, wl, tc.found)
				}
			}
		})
	}
	t.Run("a read that fails", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				return apierrors.NewServiceUnavailable("etcd leader changed")
			}}).Build()
		if _, err := Of(t.Context(), c, job("")); !apierrors.IsServiceUnavailable(err) {
			t.Fatalf("got %v, want the read's error", err)
		}
	})
}

func TestJobNameOfADispatchedWorkload(t *testing.T) {
	wl := func(name string, origin bool) *kueue.Workload {
		w := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if origin {
			w.Labels = map[string]string{kueue.MultiKueueOriginLabel: "mk"}
		}
		return w
	}
	for name, tc := range map[string]struct {
		wl   *kueue.Workload
		want string
		ok   bool
	}{
		"dispatched here":                  {wl: wl("trainjob-clash-1a2b3", true), want: "clash", ok: true},
		"a job name with dashes":           {wl: wl("trainjob-my-long-job-1a2b3", true), want: "my-long-job", ok: true},
		"our own, not dispatched":          {wl: wl("trainjob-clash-1a2b3", false)},
		"another kind's":                   {wl: wl("jobset-clash-1a2b3", true)},
		"a name the framework never makes": {wl: wl("trainjob-", true)},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := JobName(tc.wl)
			if got != tc.want || ok != tc.ok {
				t.Errorf("JobName = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
