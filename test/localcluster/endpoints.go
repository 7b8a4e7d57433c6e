package localcluster

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// endpointSliceManager marks the EndpointSlices this package (and the
// tests standing in for kubelet and the EndpointSlice controller) write.
const endpointSliceManager = "localcluster.trainjob-kueue.dev"

// LoopbackEndpointSlice is an EndpointSlice named name of the Service
// namespace/service that sends the Service's port portName ("" for an
// unnamed one) to localhost:port, where a server on this host listens.
// kube-apiserver with EndpointRouting dials it for webhook and aggregated
// API calls to that Service. The address is the FQDN "localhost":
// EndpointSlices refuse loopback IPs, and the API server resolves the name
// itself. ready is the endpoint's Ready condition, which the API server
// honours: a not-ready endpoint receives no call.
func LoopbackEndpointSlice(namespace, name, service, portName string, port int32, ready bool) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace,
			Name:      name,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: service,
				discoveryv1.LabelManagedBy:   endpointSliceManager,
			},
		},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{"localhost"},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(ready), Terminating: ptr.To(!ready)},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(port)}},
	}
}
