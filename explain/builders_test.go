package explain

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/trainjob-kueue/trainjob-kueue/podsets"
)

// Builders shared by the tests of package explain: ClusterQueues, flavors
// and roles written the way an admin reads them.

const (
	nvidiaGPU = corev1.ResourceName("nvidia.com/gpu")
	fpga      = corev1.ResourceName("example.com/fpga")
)

// requests is a resource list from name, quantity pairs.
func requests(t *testing.T, pairs ...string) corev1.ResourceList {
	t.Helper()
	if len(pairs)%2 != 0 {
		t.Fatalf("requests(%q): odd number of arguments", pairs)
	}
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// resourceQuota is one resource of a flavor in a ClusterQueue; the limits
// are unset when "".
type resourceQuota struct {
	name                                  corev1.ResourceName
	nominal, borrowingLimit, lendingLimit string
}

func flavorQuotas(flavor string, quotas ...resourceQuota) kueue.FlavorQuotas {
	fq := kueue.FlavorQuotas{Name: kueue.ResourceFlavorReference(flavor)}
	for _, rq := range quotas {
		q := kueue.ResourceQuota{Name: rq.name, NominalQuota: resource.MustParse(rq.nominal)}
		if rq.borrowingLimit != "" {
			q.BorrowingLimit = ptr.To(resource.MustParse(rq.borrowingLimit))
		}
		if rq.lendingLimit != "" {
			q.LendingLimit = ptr.To(resource.MustParse(rq.lendingLimit))
		}
		fq.Resources = append(fq.Resources, q)
	}
	return fq
}

func resourceGroup(covered []corev1.ResourceName, flavors ...kueue.FlavorQuotas) kueue.ResourceGroup {
	return kueue.ResourceGroup{CoveredResources: covered, Flavors: flavors}
}

func newClusterQueue(name, cohort string, groups ...kueue.ResourceGroup) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       kueue.ClusterQueueSpec{CohortName: kueue.CohortReference(cohort), ResourceGroups: groups},
	}
}

// gpuQueue is a ClusterQueue with one resource group covering GPUs, one
// flavor per quota given.
func gpuQueue(name, cohort string, flavors ...kueue.FlavorQuotas) *kueue.ClusterQueue {
	return newClusterQueue(name, cohort, resourceGroup([]corev1.ResourceName{nvidiaGPU}, flavors...))
}

// reserving records what the admitted workloads of cq reserve in flavor.
func reserving(cq *kueue.ClusterQueue, flavor string, used corev1.ResourceList) *kueue.ClusterQueue {
	fu := kueue.FlavorUsage{Name: kueue.ResourceFlavorReference(flavor)}
	for r, q := range used {
		fu.Resources = append(fu.Resources, kueue.ResourceUsage{Name: r, Total: q})
	}
	cq.Status.FlavorsReservation = append(cq.Status.FlavorsReservation, fu)
	return cq
}

func resourceFlavor(name string, nodeLabels map[string]string) *kueue.ResourceFlavor {
	return &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ResourceFlavorSpec{NodeLabels: nodeLabels}}
}

// flavorsByName indexes flavors the way Explainer.queue does.
func flavorsByName(rfs ...*kueue.ResourceFlavor) map[string]*kueue.ResourceFlavor {
	out := map[string]*kueue.ResourceFlavor{}
	for _, rf := range rfs {
		out[rf.Name] = rf
	}
	return out
}

// podRole is a role of pods pods, each requesting perPod.
func podRole(name string, pods int32, perPod corev1.ResourceList) podsets.Role {
	return podsets.Role{Name: name, Replicas: 1, PodsPerReplica: pods, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "node", Resources: corev1.ResourceRequirements{Requests: perPod}}},
	}}}
}
