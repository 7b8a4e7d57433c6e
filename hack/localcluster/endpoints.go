package localcluster

import (
	"errors"
	"net"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// endpointSliceManager marks the EndpointSlices tests write standing in
// for kubelet and the EndpointSlice controller.
const endpointSliceManager = "localcluster.trainjob-kueue.dev"

// HostIP is an IPv4 address of this host that is not loopback: the address
// an EndpointSlice can name for a server on this host (slices refuse
// loopback addresses, and FQDN ones need a dotted name that resolves,
// which "localhost" is not). Calls to it never leave the host.
func HostIP() (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
				return ipn.IP.String(), nil
			}
		}
	}
	return "", errors.New("this host has no non-loopback IPv4 address for an EndpointSlice to name")
}

// HostEndpointSlice is an EndpointSlice named name of the Service
// namespace/service that sends the Service's port portName ("" for an
// unnamed one) to ip:port on this host (HostIP). kube-apiserver with
// EndpointRouting dials it for webhook calls to that Service. ready is the
// endpoint's Ready condition, which the API server honours: a not-ready
// endpoint receives no call; terminating marks the endpoint of a pod being
// deleted.
func HostEndpointSlice(namespace, name, service, portName, ip string, port int32, ready, terminating bool) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace,
			Name:      name,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: service,
				discoveryv1.LabelManagedBy:   endpointSliceManager,
			},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(ready), Terminating: ptr.To(terminating)},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(port)}},
	}
}
