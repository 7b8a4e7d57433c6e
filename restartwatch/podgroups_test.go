package restartwatch

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainjob-kueue/trainjob-kueue/discovery"
)

// The manager restarts when scheduler-plugins' PodGroup CRD comes after it
// started without it (a job waiting for gang mode coscheduling then
// starts), or goes while it served it; not while it is as served.
func TestThePodGroupCRDComingOrGoingRestarts(t *testing.T) {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: discovery.PodGroupCRD}}
	for name, tc := range map[string]struct {
		installed, serving bool
		want               string
	}{
		"installed after a start without it": {installed: true, want: "was installed: restarting to serve gang mode coscheduling"},
		"removed while served":               {serving: true, want: "was removed"},
		"installed, served":                  {installed: true, serving: true},
		"missing, not served":                {},
	} {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(s)
			if tc.installed {
				b = b.WithObjects(crd.DeepCopy())
			}
			var stopped error
			w := &podGroupsWatch{client: b.Build(), serving: tc.serving, stop: func(err error) { stopped = err }}
			if _, err := w.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: discovery.PodGroupCRD}}); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && stopped != nil:
				t.Errorf("stopped: %v", stopped)
			case tc.want != "" && (stopped == nil || !strings.Contains(stopped.Error(), tc.want)):
				t.Errorf("stopped with %v, want %q", stopped, tc.want)
			}
		})
	}
}
