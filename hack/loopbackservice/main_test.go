package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A connection goes to a ready backend only; none ready, it is closed;
// a backend's readiness is followed as it changes.
func TestConnectionsGoToReadyBackendsOnly(t *testing.T) {
	type replica struct {
		name  string
		ready atomic.Bool
		l     net.Listener
		probe *httptest.Server
	}
	start := func(name string) *replica {
		r := &replica{name: name}
		var err error
		if r.l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				c, err := r.l.Accept()
				if err != nil {
					return
				}
				_, _ = io.WriteString(c, r.name)
				_ = c.Close()
			}
		}()
		r.probe = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if !r.ready.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}))
		t.Cleanup(func() { r.l.Close(); r.probe.Close() })
		return r
	}
	a, b := start("a"), start("b")
	backends, err := parseBackends([]string{a.l.Addr().String() + "=" + a.probe.URL, b.l.Addr().String() + "=" + b.probe.URL})
	if err != nil {
		t.Fatal(err)
	}
	s := &service{backends: backends}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go s.probe(ctx, 10*time.Millisecond)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { _ = s.serve(l) }()
	answer := func() string {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		got, _ := io.ReadAll(c)
		return string(got)
	}
	settle := func() { time.Sleep(100 * time.Millisecond) }

	settle()
	if got := answer(); got != "" {
		t.Errorf("no backend ready: answered by %q, want the connection closed", got)
	}
	a.ready.Store(true)
	settle()
	for i := range 4 {
		if got := answer(); got != "a" {
			t.Fatalf("connection %d: answered by %q, want a, the only ready one", i, got)
		}
	}
	b.ready.Store(true)
	settle()
	seen := map[string]int{}
	for range 4 {
		seen[answer()]++
	}
	if seen["a"] != 2 || seen["b"] != 2 {
		t.Errorf("both ready: answers %v, want 2 each (round robin)", seen)
	}
	a.ready.Store(false)
	settle()
	for i := range 4 {
		if got := answer(); got != "b" {
			t.Fatalf("a draining, connection %d: answered by %q, want b", i, got)
		}
	}
}

func TestBackendsAreNamedWithTheirReadiness(t *testing.T) {
	for _, bad := range [][]string{nil, {"127.0.0.1:1"}, {"=http://x"}} {
		if _, err := parseBackends(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	got, err := parseBackends([]string{"127.0.0.1:1=http://127.0.0.1:2/readyz"})
	if err != nil || len(got) != 1 || got[0].addr != "127.0.0.1:1" || got[0].readyURL != "http://127.0.0.1:2/readyz" {
		t.Errorf("got %v, %v", got, err)
	}
}
