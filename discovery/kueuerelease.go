package discovery

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// linkedKueue is the Kueue release whose job framework and API types this
// build links (go.mod).
const linkedKueue = "v0.19.2"

// KueueRelease is what the installed Workload CRD tells about the Kueue
// release serving it: the configuration defaults it applies and how many
// PodSets a Workload may have.
type KueueRelease struct {
	// PodsReadyByDefault: Kueue v0.19 and later wait for pods to be ready
	// unless the configuration or a gate says otherwise; before v0.19 only
	// when the configuration has a waitForPodsReady section.
	PodsReadyByDefault bool
	// MaxPodSets per Workload: 8 up to v0.17, 10 in v0.18, 18 since v0.19.
	MaxPodSets int
}

// v019MaxPodSets is the PodSet limit Kueue v0.19 raised the Workload to; it
// is how the CRD tells v0.19 and later from older releases.
const v019MaxPodSets = 18

// Name says which releases the CRD belongs to, for logs and refusals.
func (r KueueRelease) Name() string {
	if r.PodsReadyByDefault {
		return "Kueue v0.19 or later"
	}
	return "Kueue before v0.19"
}

// KueueReleaseOf reads the Workload CRD's served schema.
func KueueReleaseOf(crd *apiextensionsv1.CustomResourceDefinition) (KueueRelease, error) {
	version := kueue.SchemeGroupVersion.Version
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Name != version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		if unknown := unknownWorkloadFields(v.Schema.OpenAPIV3Schema); len(unknown) > 0 {
			return KueueRelease{}, fmt.Errorf("the installed Kueue is newer than the Kueue %s this build of trainjob-kueue links: its Workloads have fields this build does not know (%s), which the job framework's full Workload updates would drop. Run a trainjob-kueue release built for that Kueue", linkedKueue, strings.Join(unknown, ", "))
		}
		limit := podsets.MaxPodSets(crd, version)
		return KueueRelease{PodsReadyByDefault: limit >= v019MaxPodSets, MaxPodSets: limit}, nil
	}
	return KueueRelease{}, fmt.Errorf("the installed Workload CRD does not serve %s (Kueue v0.15 or later has it): upgrade Kueue", kueue.SchemeGroupVersion)
}

// workloadCRDOf reads the installed Workload CRD.
func workloadCRDOf(ctx context.Context, c client.Reader) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: workloadCRD}, crd); err != nil {
		return nil, fmt.Errorf("reading CRD %s (is Kueue installed?): %w", workloadCRD, err)
	}
	return crd, nil
}

// unknownWorkloadFields lists the fields of the installed Workload schema
// that the linked Kueue's Go types lack, pod templates aside (their fields
// follow the Kubernetes release Kueue builds against; the job framework
// writes only templates we computed). The job framework updates Workloads
// with full Updates: on a newer Kueue those fields would be dropped.
func unknownWorkloadFields(schema *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	var walk func(s *apiextensionsv1.JSONSchemaProps, t reflect.Type, path string)
	walk = func(s *apiextensionsv1.JSONSchemaProps, t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			if t.Kind() == reflect.Slice && s.Items != nil && s.Items.Schema != nil {
				s = s.Items.Schema
				path += "[]"
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t == reflect.TypeFor[corev1.PodTemplateSpec]() || len(s.Properties) == 0 {
			return
		}
		fields := jsonFields(t)
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			f, ok := fields[name]
			if !ok {
				out = append(out, path+"."+name)
				continue
			}
			prop := s.Properties[name]
			walk(&prop, f, path+"."+name)
		}
	}
	root := schema.Properties
	for _, part := range []string{"spec", "status"} {
		if s, ok := root[part]; ok {
			f := jsonFields(reflect.TypeFor[kueue.Workload]())[part]
			walk(&s, f, part)
		}
	}
	return out
}

// jsonFields maps the JSON names of t's fields (inlined ones included) to
// their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			maps.Copy(out, jsonFields(f.Type))
			continue
		}
		out[name] = f.Type
	}
	return out
}

// InstalledKueueRelease reads what the installed Workload CRD tells of the
// Kueue release serving it.
func InstalledKueueRelease(ctx context.Context, c client.Reader) (KueueRelease, error) {
	crd, err := workloadCRDOf(ctx, c)
	if err != nil {
		return KueueRelease{}, err
	}
	return KueueReleaseOf(crd)
}
