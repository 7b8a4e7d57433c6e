// Package scheme holds every kind trainjob-kueue reads or writes: the
// manager's and the kubectl plugin's one scheme, and the integration
// tier's. One other builder stays apart, on purpose: hack/fixtures.Scheme,
// the demo's, the benchmarks' and the e2e tier's, registers Trainer's own
// TrainJob Go type (the objects they create are upstream's, field for
// field) where this one registers trainjob.TrainJob under the same kind,
// and a scheme maps a kind to one Go type only; it adds the
// ProvisioningRequests the fake provisioner writes, a kind the manager
// never touches.
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// New holds every type the manager reads or writes.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(kueue.AddToScheme(s))
	utilruntime.Must(trainjob.AddToScheme(s))
	utilruntime.Must(jobsetapi.AddToScheme(s))
	utilruntime.Must(schedv1alpha1.AddToScheme(s))
	return s
}
