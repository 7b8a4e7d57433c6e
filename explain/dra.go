package explain

import (
	"context"
	"fmt"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
	"github.com/trainjob-kueue/trainjob-kueue/quota"
)

// DRADevices are the devices of one DeviceClass a role's pods claim
// through ResourceClaimTemplates (Dynamic Resource Allocation).
type DRADevices struct {
	Class  string `json:"deviceClass"`
	PerPod int64  `json:"perPod"`
	Total  int64  `json:"total"`
	// CountedAs is the quota resource Kueue counts them as (its
	// Configuration's deviceClassMappings), as read from what Kueue
	// counted for the Workload; "" before Kueue has counted it.
	CountedAs corev1.ResourceName `json:"countedAs,omitempty"`
}

// draInput is what a job's roles claim through DRA.
type draInput struct {
	// PerPod devices per role, by DeviceClass.
	PerPod map[string]quota.Devices
	// Missing are the ResourceClaimTemplates the roles name that do not
	// exist in the job's namespace.
	Missing []string
}

// dra reads the ResourceClaimTemplates of the job's namespace, once, when
// a role claims through one; nil otherwise. A reader who may not list
// them, or a cluster without DRA, gets nil: the devices are then not shown.
func (e *Explainer) dra(ctx context.Context, namespace string, roles []podsets.Role) (*draInput, error) {
	if !slices.ContainsFunc(roles, func(r podsets.Role) bool { return quota.ClaimsTemplates(&r.Template.Spec) }) {
		return nil, nil
	}
	var list resourcev1.ResourceClaimTemplateList
	if err := e.Client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing the ResourceClaimTemplates of namespace %s: %w", namespace, err)
	}
	templates := map[string]quota.Devices{}
	for _, t := range list.Items {
		templates[t.Name] = quota.TemplateDevices(t.Spec.Spec)
	}
	in := &draInput{PerPod: map[string]quota.Devices{}}
	for _, r := range roles {
		devices, missing := quota.PodDevices(&r.Template.Spec, templates)
		if len(devices) > 0 {
			in.PerPod[r.Name] = devices
		}
		for _, m := range missing {
			if !slices.Contains(in.Missing, m) {
				in.Missing = append(in.Missing, m)
			}
		}
	}
	return in, nil
}

// addDRA gives each role its DRA devices, and, where Kueue counted them
// for the Workload, the quota resource they count as in the role's
// requests (so the fit is judged on them too).
func addDRA(ex *Explanation, in Input) {
	if in.DRA == nil {
		return
	}
	ex.DRAMissing = in.DRA.Missing
	for i := range ex.Roles {
		r := &ex.Roles[i]
		devices := in.DRA.PerPod[r.Name]
		if len(devices) == 0 {
			continue
		}
		counted := countedBeyond(in.Workload, r.Name, r.Total)
		for _, class := range devices.Classes() {
			d := DRADevices{Class: class, PerPod: devices[class], Total: devices[class] * int64(r.Count)}
			if len(devices) == 1 && len(counted) == 1 {
				for name, total := range counted {
					d.CountedAs = name
					if r.PerPod == nil {
						r.PerPod, r.Total = corev1.ResourceList{}, corev1.ResourceList{}
					}
					r.Total[name] = total
					r.PerPod[name] = *resource.NewQuantity(total.Value()/max(int64(r.Count), 1), resource.DecimalSI)
				}
			}
			r.DRA = append(r.DRA, d)
		}
	}
}

// countedBeyond is what Kueue counted for the role's PodSet (at admission,
// or when it last considered it) beyond the pods' container requests:
// the quota resources its DRA devices count as.
func countedBeyond(wl *kueue.Workload, role string, requests corev1.ResourceList) corev1.ResourceList {
	if wl == nil {
		return nil
	}
	var counted corev1.ResourceList
	if adm := wl.Status.Admission; adm != nil {
		for _, a := range adm.PodSetAssignments {
			if string(a.Name) == role {
				counted = a.ResourceUsage
			}
		}
	}
	for _, r := range wl.Status.ResourceRequests {
		if counted == nil && string(r.Name) == role {
			counted = r.Resources
		}
	}
	out := corev1.ResourceList{}
	for name, q := range counted {
		if _, requested := requests[name]; !requested {
			out[name] = q
		}
	}
	return out
}

// writeDRA says what each role claims through DRA, and which templates are
// missing.
func writeDRA(w io.Writer, ex *Explanation) {
	for _, r := range ex.Roles {
		for _, d := range r.DRA {
			counted := "not counted by Kueue yet (its Configuration's deviceClassMappings name the quota resource)"
			if d.CountedAs != "" {
				counted = "counted by Kueue as " + string(d.CountedAs)
			}
			fmt.Fprintf(w, "DRA:	%s claims %d × %s per pod, %d in all, %s\n", r.Name, d.PerPod, d.Class, d.Total, counted)
		}
	}
	for _, m := range ex.DRAMissing {
		fmt.Fprintf(w, "DRA:	ResourceClaimTemplate %s does not exist in the job's namespace: Kueue admits nothing for the job until it does\n", m)
	}
}
