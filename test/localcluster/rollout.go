package localcluster

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// Rollout stops one component of a running cluster the way a rollout does
// (SIGTERM, then its remaining time to exit) and starts it again with the
// same command line, as `make scale` does to time a cold start (Restart
// kills it, as a crash would).
func (c *Cluster) Rollout(component string) error {
	pid, ok := c.state.PIDs[component]
	if !ok {
		return fmt.Errorf("cluster %s runs no %s", c.Dir, component)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return fmt.Errorf("reading the command line of %s: %w", component, err)
	}
	argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	stopAll(map[string]int{component: pid}, io.Discard)
	newPID, err := startProcess(c.Dir, component, nil, argv[0], argv[1:]...)
	if err != nil {
		return err
	}
	c.state.PIDs[component] = newPID
	return c.state.write(c.Dir)
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
