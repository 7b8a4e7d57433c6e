package main

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A kwok node with N GPUs gets a slice of N devices, named and indexed,
// owned by the node; any other node none.
func TestSliceFor(t *testing.T) {
	node := func(kwok bool, gpus string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid"}}
		if kwok {
			n.Annotations = map[string]string{"kwok.x-k8s.io/node": "fake"}
		}
		if gpus != "" {
			n.Status.Capacity = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}
		}
		return n
	}
	s := SliceFor(node(true, "4"))
	if s == nil || len(s.Spec.Devices) != 4 || s.Spec.Driver != Driver || *s.Spec.NodeName != "n1" || s.OwnerReferences[0].UID != "uid" {
		t.Fatalf("slice %+v", s)
	}
	last := s.Spec.Devices[3]
	if last.Name != "gpu-3" || *last.Attributes["index"].IntValue != 3 || *last.Attributes["productName"].StringValue != ProductName {
		t.Errorf("device %+v", last)
	}
	for name, n := range map[string]*corev1.Node{"not kwok's": node(false, "4"), "no GPUs": node(true, ""), "zero GPUs": node(true, "0")} {
		if got := SliceFor(n); got != nil {
			t.Errorf("%s: slice %+v", name, got)
		}
	}
}
