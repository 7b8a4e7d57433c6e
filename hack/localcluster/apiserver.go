package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainjob-kueue/trainjob-kueue/hack/poll"
)

// apiServer is kube-apiserver: RBAC, an audit log, and the aggregation
// layer as kubeadm sets it up (Kueue's visibility API).
type apiServer struct{}

func (apiServer) name() string      { return "kube-apiserver" }
func (apiServer) runs(Options) bool { return true }
func (apiServer) ports() []string   { return []string{"apiserver"} }

func (apiServer) start(_ context.Context, b *bringUp) error {
	if err := writeTemplate("audit-policy.yaml", b.path("config", "audit-policy.yaml"),
		struct{ TrainJobBodies bool }{b.o.AuditTrainJobBodies}); err != nil {
		return err
	}
	return b.launch("kube-apiserver", nil, append(append(workloadAPIFlags(b.o, true), loopbackFlags(b.o)...),
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", b.ports["etcd"]),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", b.ports["apiserver"]),
		"--tls-cert-file="+b.path("certs", "apiserver", "tls.crt"),
		"--tls-private-key-file="+b.path("certs", "apiserver", "tls.key"),
		"--client-ca-file="+b.path("certs", "ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+b.path("certs", "sa.key"),
		"--service-account-signing-key-file="+b.path("certs", "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// No kubelet mounts service account tokens for kwok's pods.
		"--disable-admission-plugins=ServiceAccount",
		"--audit-log-path="+b.c.AuditLog(),
		"--audit-policy-file="+b.path("config", "audit-policy.yaml"),
		"--profiling=false",
		"--requestheader-client-ca-file="+b.path("certs", "ca.crt"),
		"--requestheader-allowed-names="+frontProxyClient,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file="+b.path("certs", "front-proxy", "tls.crt"),
		"--proxy-client-key-file="+b.path("certs", "front-proxy", "tls.key"),
		fmt.Sprintf("--enable-aggregator-routing=%t", b.o.EndpointRouting),
	)...)
}

// loopbackFlags: from Kubernetes 1.37 the API server refuses a loopback
// advertise address for the endpoints of Service "kubernetes", which
// nothing here reads (every component runs on this host, and kwok's pods
// call nothing): that Service is left without endpoints.
func loopbackFlags(o Options) []string {
	if o.KubernetesVersion == KubernetesCoscheduling {
		return nil
	}
	return []string{"--endpoint-reconciler-type=none"}
}

// workloadAPIFlags turn Kubernetes' Workload API on where the release has
// it: the GenericWorkload gate in every component, and in the API server
// its beta group too (a beta API is off unless asked for).
func workloadAPIFlags(o Options, apiServer bool) []string {
	if !o.workloadAPI() {
		return nil
	}
	flags := []string{"--feature-gates=GenericWorkload=true"}
	if apiServer {
		flags = append(flags, "--runtime-config=scheduling.k8s.io/v1beta1=true")
	}
	return flags
}

// serve waits until the API server is ready and gives bring-up its admin
// client.
func (apiServer) serve(ctx context.Context, b *bringUp) error {
	b.step("waiting for kube-apiserver")
	cfg, err := clientcmd.BuildConfigFromFlags("", b.c.Kubeconfig)
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	if b.admin, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if err := poll.UntilDone(ctx, 90*time.Second, func() error {
		if err := b.c.exited("kube-apiserver", b.pids["kube-apiserver"]); err != nil {
			return poll.Stop(err)
		}
		return httpsOK(cfg.Host+"/readyz", b.c.Kubeconfig)
	}); err != nil {
		return fmt.Errorf("kube-apiserver not ready: %w", err)
	}
	return nil
}

// httpsOK GETs url authenticated as the kubeconfig's user.
func httpsOK(url, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAData)
	cert, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}}
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body := new(bytes.Buffer)
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s %s", url, resp.Status, body.String())
	}
	return nil
}
