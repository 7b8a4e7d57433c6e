package main

import (
	"crypto/tls"
	"fmt"
	"net"
)

// tlsOptions for the webhook and metrics servers: TLS 1.2 or later, and
// HTTP/1.1 only unless HTTP/2 is asked for — HTTP/2's stream resets make a
// cheap denial of service (CVE-2023-44487, the rapid reset attack), which is
// why kubebuilder's scaffold turns it off too.
func tlsOptions(enableHTTP2 bool) []func(*tls.Config) {
	opts := []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }}
	if !enableHTTP2 {
		opts = append(opts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	return opts
}

// checkPprofAddress refuses to serve profiles anywhere but on loopback: they
// expose the process' memory and cost CPU on demand.
func checkPprofAddress(addr string) error {
	if addr == "" || addr == "0" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--pprof-bind-address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--pprof-bind-address %q: pprof is served on loopback only (127.0.0.1:PORT); reach it with kubectl port-forward", addr)
}
