package restart

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// A mode change restarts the manager in process; the webhook server does
// not stop with the run: the earlier run's webhooks answer until the new
// run serves, then the new run's, and no call in between is refused (a
// real server on TLS, a call every few milliseconds throughout).
func TestTheWebhookServerAnswersAcrossARestartInProcess(t *testing.T) {
	dir := t.TempDir()
	crt, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"tls.crt": crt, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	process, stop := context.WithCancel(t.Context())
	p := NewWebhooks(process, webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir}))
	answering := func(run string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(run)) })
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	call := func() (string, error) {
		resp, err := client.Post(fmt.Sprintf("https://127.0.0.1:%d/validate", port), "application/json", strings.NewReader("{}"))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		return string(body), err
	}
	startRun := func(name string) (*RunWebhooks, context.CancelFunc, <-chan error) {
		r := p.ForRun(&atomic.Bool{})
		r.Register("/validate", answering(name))
		ctx, cancel := context.WithCancel(process)
		done := make(chan error, 1)
		go func() { done <- r.Start(ctx) }()
		return r, cancel, done
	}

	first, endFirst, firstDone := startRun("first")
	if p.Answering() {
		t.Error("answering before any run served")
	}
	first.Serve()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := call(); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the server never answered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Calls throughout the restart.
	var refused atomic.Int32
	var lastErr atomic.Value
	answers := make(chan string, 10000)
	calling, stopCalling := context.WithCancel(t.Context())
	called := make(chan struct{})
	go func() {
		defer close(called)
		for calling.Err() == nil {
			got, err := call()
			if err != nil {
				refused.Add(1)
				lastErr.Store(err.Error())
			} else {
				answers <- got
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	endFirst()
	if err := <-firstDone; err != nil {
		t.Fatalf("the first run's Start: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // the run is over: its webhooks still answer
	if !p.Answering() {
		t.Error("not answering between the runs, while the first run's webhooks do")
	}
	second, _, _ := startRun("second")
	time.Sleep(200 * time.Millisecond) // registered, not serving yet
	second.Serve()
	time.Sleep(200 * time.Millisecond)
	stopCalling()
	<-called
	close(answers)

	if n := refused.Load(); n > 0 {
		t.Errorf("%d calls refused across the restart (last: %v)", n, lastErr.Load())
	}
	var seen []string
	for a := range answers {
		if len(seen) == 0 || seen[len(seen)-1] != a {
			seen = append(seen, a)
		}
	}
	if strings.Join(seen, ",") != "first,second" {
		t.Errorf("answered by %v in turn, want the first run's until the second served, then the second's", seen)
	}
	stop()
	p.Wait(5 * time.Second)
	if _, err := call(); err == nil {
		t.Error("the server still answers after its process ended")
	}
}

// A new run registers its webhooks through controller-runtime's builder,
// which skips a path the server's mux already handles: each run's mux
// has only the paths that run registered, so the second run's webhooks
// are registered (and then answer) although the process's server has
// routed those paths since the first.
func TestEachRunRegistersItsWebhooksAgain(t *testing.T) {
	p := NewWebhooks(t.Context(), webhook.NewServer(webhook.Options{}))
	handled := func(r *RunWebhooks, path string) bool {
		// What the builder asks (isAlreadyHandled).
		h, pattern := r.WebhookMux().Handler(&http.Request{URL: &url.URL{Path: path}})
		return h != nil && pattern == path
	}
	first := p.ForRun(&atomic.Bool{})
	first.Register("/validate", http.NotFoundHandler())
	if !handled(first, "/validate") {
		t.Fatal("the first run does not see the path it registered: it would register it twice")
	}
	second := p.ForRun(&atomic.Bool{})
	if handled(second, "/validate") {
		t.Fatal("the second run sees the first run's path as handled: the builder would register nothing, and the first run's webhooks would answer for good")
	}
}
