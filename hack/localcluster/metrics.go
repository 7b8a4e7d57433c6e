package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// metricsReader is the service account whose tokens read the components'
// metrics, bound to the shipped metrics-reader role's one rule.
const metricsReader = "trainjob-kueue-metrics-reader"

// MetricsToken is a token (valid 6 hours) that controller-runtime's secure
// metrics accept: they authenticate bearer tokens only, not the admin's
// client certificate. The service account and its binding are created once.
func (c *Cluster) MetricsToken(ctx context.Context) (string, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	const ns = metav1.NamespaceDefault
	create := func(err error, what string) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", what, metricsReader, err)
		}
		return nil
	}
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: metricsReader}}, metav1.CreateOptions{})
	if err := create(err, "ServiceAccount"); err != nil {
		return "", err
	}
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: metricsReader},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	if err := create(err, "ClusterRole"); err != nil {
		return "", err
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: metricsReader},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReader},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: metricsReader}}}, metav1.CreateOptions{})
	if err := create(err, "ClusterRoleBinding"); err != nil {
		return "", err
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, metricsReader, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](6 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("a token for %s: %w", metricsReader, err)
	}
	return tok.Status.Token, nil
}

// Scrape GETs an HTTPS endpoint of the cluster (a component's metrics on
// loopback) with the admin's client certificate and, when not empty, a
// bearer token (controller-runtime's secure metrics authenticate tokens
// only).
func (c *Cluster) Scrape(url, token string) ([]byte, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		return nil, err
	}
	// trainjob-kueue's metrics server has a self-signed certificate of its
	// own (controller-runtime's, with no certificate directory given); the
	// endpoint is on loopback and still authenticates us.
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}} //nolint:gosec // loopback, see above
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body := new(bytes.Buffer)
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s %s", url, resp.Status, body.String())
	}
	return body.Bytes(), nil
}
