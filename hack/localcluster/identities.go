package localcluster

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// identities: every component has its own client certificate. The upstream
// components act as cluster admins here; trainjob-kueue gets exactly the
// RBAC of config/rbac, so the local cluster proves it is enough.
func identities() map[string][]string {
	return map[string][]string{
		"admin":                      {"kubernetes-admin", "system:masters"},
		"kube-controller-manager":    {"system:kube-controller-manager", "system:masters"},
		"kube-scheduler":             {"system:kube-scheduler", "system:masters"},
		"kwok":                       {"system:kwok", "system:masters"},
		"kueue":                      {"system:serviceaccount:kueue-system:kueue-controller-manager", "system:masters"},
		"trainer-controller-manager": {"system:serviceaccount:kubeflow-system:kubeflow-trainer-controller-manager", "system:masters"},
		"jobset-controller-manager":  {"system:serviceaccount:jobset-system:jobset-controller-manager", "system:masters"},
		"fake-dra-driver":            {"system:fake-dra-driver", "system:masters"},
		"fake-provisioner":           {"system:fake-provisioner", "system:masters"},
		"trainjob-kueue":             {"system:serviceaccount:trainjob-kueue-system:trainjob-kueue-controller-manager", "system:serviceaccounts", "system:serviceaccounts:trainjob-kueue-system"},
	}
}

// pki writes the cluster's CA, its serving certificates, the service
// account signing key and a kubeconfig per identity.
func (b *bringUp) pki() error {
	var err error
	if b.ca, err = NewCA("trainjob-kueue-local-" + b.o.Name); err != nil {
		return err
	}
	if err := os.WriteFile(b.path("certs", "ca.crt"), b.ca.CertPEM, 0o644); err != nil {
		return err
	}
	for name, dir := range map[string]string{"apiserver": "apiserver", "webhooks": "webhook"} {
		kp, err := b.ca.Serving(name)
		if err != nil {
			return err
		}
		if err := kp.WriteTLS(b.path("certs", dir)); err != nil {
			return err
		}
	}
	// Kueue's visibility server: kube-apiserver's aggregation layer checks
	// the name of the Service its APIServices name.
	vis, err := b.ca.Serving("kueue-visibility", visibilityService+"."+kueueNamespace+".svc")
	if err != nil {
		return err
	}
	if err := vis.WriteTLS(b.path("certs", "visibility")); err != nil {
		return err
	}
	// The aggregation layer's client: kube-apiserver proxies requests for
	// aggregated APIs (Kueue's visibility API) with it, naming the user in
	// request headers.
	front, err := b.ca.Client(frontProxyClient)
	if err != nil {
		return err
	}
	if err := front.WriteTLS(b.path("certs", "front-proxy")); err != nil {
		return err
	}
	if err := b.serviceAccountKey(); err != nil {
		return err
	}
	return b.kubeconfigs()
}

func (b *bringUp) serviceAccountKey() error {
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		return err
	}
	return os.WriteFile(b.path("certs", "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func (b *bringUp) kubeconfigs() error {
	server := fmt.Sprintf("https://127.0.0.1:%d", b.ports["apiserver"])
	for who, id := range identities() {
		kp, err := b.ca.Client(id[0], id[1:]...)
		if err != nil {
			return err
		}
		path := b.kubeconfig(who)
		if who == "admin" {
			path = b.c.Kubeconfig
		}
		if err := WriteKubeconfig(path, server, b.ca.CertPEM, kp, who); err != nil {
			return err
		}
	}
	return nil
}
