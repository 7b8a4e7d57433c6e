package integration

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// KueueRelease is what the installed Workload CRD tells about the Kueue
// release serving it: the configuration defaults it applies and how many
// PodSets a Workload may have.
type KueueRelease struct {
	// Before017: Kueue v0.16 or older (its Workload has no
	// spec.preemptionGates). There waitForPodsReady is off unless the
	// configuration has the section; from v0.17 on it is on by default.
	Before017 bool
	// MaxPodSets per Workload: 8 before v0.17, 18 since.
	MaxPodSets int
}

// Name says which releases the CRD belongs to, for logs and refusals.
func (r KueueRelease) Name() string {
	if r.Before017 {
		return "Kueue v0.16 or older"
	}
	return "Kueue v0.17 or later"
}

// KueueReleaseOf reads the Workload CRD's served schema.
func KueueReleaseOf(crd *apiextensionsv1.CustomResourceDefinition) (KueueRelease, error) {
	version := kueue.SchemeGroupVersion.Version
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Name != version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
		_, gates := spec.Properties["preemptionGates"]
		return KueueRelease{Before017: !gates, MaxPodSets: podsets.MaxPodSets(crd, version)}, nil
	}
	return KueueRelease{}, fmt.Errorf("the installed Workload CRD does not serve %s (Kueue v0.15 or later has it): upgrade Kueue", kueue.SchemeGroupVersion)
}

// DiscoverKueue reads the installed Workload CRD.
func DiscoverKueue(ctx context.Context, c client.Reader) (KueueRelease, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: workloadCRD}, &crd); err != nil {
		return KueueRelease{}, fmt.Errorf("reading CRD %s (is Kueue installed?): %w", workloadCRD, err)
	}
	return KueueReleaseOf(&crd)
}
