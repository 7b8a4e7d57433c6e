package integration

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	"github.com/trainjob-kueue/trainjob-kueue/scheme"
	"github.com/trainjob-kueue/trainjob-kueue/settings"
	"github.com/trainjob-kueue/trainjob-kueue/shape"
	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// A job naming an object that does not exist is told which, once, and
// looked at again after missingReferenceRetry; any other error is left to
// the controller's backoff.
func TestMissingReferenceIsSaidOnceAndRetriedQuietly(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "workloadpriorityclasses"}, "high")
	withLabel := func(key, value string) *trainjob.TrainJob {
		j := &trainjob.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "uid"}}
		if key != "" {
			j.Labels = map[string]string{key: value}
		}
		return j
	}
	high := &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}}
	for name, tc := range map[string]struct {
		job     *trainjob.TrainJob
		objs    []client.Object
		err     error
		handled string // the reason said, "" when not handled
	}{
		"a missing priority class":                       {job: withLabel(constants.WorkloadPriorityClassLabel, "high"), err: notFound, handled: ReasonPriorityClassNotFound},
		"a priority class that exists: another NotFound": {job: withLabel(constants.WorkloadPriorityClassLabel, "high"), objs: []client.Object{high}, err: notFound},
		"no priority class named":                        {job: withLabel("", ""), err: notFound},
		"a missing prebuilt Workload":                    {job: withLabel(constants.PrebuiltWorkloadLabel, "wl"), err: jobframework.ErrPrebuiltWorkloadNotFound, handled: ReasonPrebuiltWorkloadNotFound},
		"another error":                                  {job: withLabel(constants.WorkloadPriorityClassLabel, "high"), err: errors.New("etcd is on fire")},
	} {
		t.Run(name, func(t *testing.T) {
			rec := events.NewFakeRecorder(8)
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(append(tc.objs, tc.job)...).Build()
			r := &Reconciler{deps: newDeps(c, c, rec, Options{Shared: settings.Shared{Shape: shape.PodTemplateOverrides{}}})}
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tc.job)}
			for range 2 {
				res, handled := r.missingReference(t.Context(), req, tc.err)
				if handled != (tc.handled != "") {
					t.Fatalf("handled: %v, want %v", handled, tc.handled != "")
				}
				if handled && res.RequeueAfter != missingReferenceRetry {
					t.Errorf("requeued after %v, want %v", res.RequeueAfter, missingReferenceRetry)
				}
			}
			got := drain(rec)
			if tc.handled == "" {
				if len(got) != 0 {
					t.Errorf("events %v for an error not ours to explain", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.handled) {
				t.Errorf("events %v, want one %s", got, tc.handled)
			}
		})
	}
}
