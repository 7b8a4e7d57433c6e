// Command loopbackservice stands in for a Kubernetes Service in front of
// the replicas of a component on a local cluster: it listens on one
// loopback port and hands each new TCP connection to a ready backend,
// round robin, as kube-proxy does with a Service's ready endpoints. A
// backend is ready while its readiness URL answers 200 (polled every
// -period); with no ready backend a connection is closed at once, as a
// Service without endpoints refuses it.
//
// TLS passes through untouched: the backends' certificates name the
// address the clients dial (127.0.0.1). A connection stays with the
// backend it was given until either side closes it; a draining backend
// that closes its server sends the clients to the others.
//
//	loopbackservice -listen 127.0.0.1:9443 -backend 127.0.0.1:9444=http://127.0.0.1:8081/readyz -backend …
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// backend is one replica: where it serves and where it says it is ready.
type backend struct {
	addr, readyURL string
	ready          atomic.Bool
}

// service hands connections to the ready backends, round robin.
type service struct {
	backends []*backend
	next     atomic.Uint64
}

// pick is the next ready backend, nil when none is.
func (s *service) pick() *backend {
	n := uint64(len(s.backends))
	start := s.next.Add(1)
	for i := range n {
		if b := s.backends[(start+i)%n]; b.ready.Load() {
			return b
		}
	}
	return nil
}

// probe keeps each backend's readiness until ctx ends.
func (s *service) probe(ctx context.Context, period time.Duration) {
	client := &http.Client{Timeout: period}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		for _, b := range s.backends {
			b.ready.Store(probeOnce(ctx, client, b.readyURL))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func probeOnce(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// serve accepts connections until the listener closes.
func (s *service) serve(l net.Listener) error {
	for {
		conn, err := l.Accept()
		if err != nil {
			return err
		}
		go s.forward(conn)
	}
}

// forward joins conn to a ready backend, or closes it when none is or the
// backend refuses.
func (s *service) forward(conn net.Conn) {
	defer conn.Close()
	b := s.pick()
	if b == nil {
		return
	}
	up, err := net.DialTimeout("tcp", b.addr, 2*time.Second)
	if err != nil {
		return
	}
	defer up.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		// Half-close so the other direction can finish its answer.
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}
	go pipe(up, conn)
	go pipe(conn, up)
	wg.Wait()
}

// parseBackends reads -backend values: ADDR=READY_URL.
func parseBackends(values []string) ([]*backend, error) {
	var out []*backend
	for _, v := range values {
		addr, url, ok := strings.Cut(v, "=")
		if !ok || addr == "" || url == "" {
			return nil, fmt.Errorf("-backend %q: want ADDR=READY_URL, e.g. 127.0.0.1:9444=http://127.0.0.1:8081/readyz", v)
		}
		out = append(out, &backend{addr: addr, readyURL: url})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no -backend given")
	}
	return out, nil
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	listen := flag.String("listen", "", "address to serve on, e.g. 127.0.0.1:9443")
	period := flag.Duration("period", 250*time.Millisecond, "how often each backend's readiness is probed")
	var values listFlag
	flag.Var(&values, "backend", "a replica: ADDR=READY_URL (repeat for each)")
	flag.Parse()
	backends, err := parseBackends(values)
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &service{backends: backends}
	go s.probe(ctx, *period)
	go func() { <-ctx.Done(); _ = l.Close() }()
	log.Printf("serving %s for %d backends", *listen, len(backends))
	if err := s.serve(l); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}
