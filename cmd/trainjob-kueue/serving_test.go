package main

import (
	"crypto/tls"
	"slices"
	"testing"
)

func TestHTTP2IsOffUnlessAskedFor(t *testing.T) {
	for _, tc := range []struct {
		enable bool
		want   []string
	}{
		{false, []string{"http/1.1"}},
		{true, nil},
	} {
		c := &tls.Config{}
		for _, o := range tlsOptions(tc.enable) {
			o(c)
		}
		if !slices.Equal(c.NextProtos, tc.want) {
			t.Errorf("enableHTTP2=%v: NextProtos %v, want %v", tc.enable, c.NextProtos, tc.want)
		}
		if c.MinVersion != tls.VersionTLS12 {
			t.Errorf("enableHTTP2=%v: MinVersion %x, want TLS 1.2", tc.enable, c.MinVersion)
		}
	}
}

func TestPprofIsServedOnLoopbackOnly(t *testing.T) {
	for addr, ok := range map[string]bool{
		"":               true,
		"0":              true,
		"127.0.0.1:6060": true,
		"localhost:6060": true,
		"[::1]:6060":     true,
		":6060":          false,
		"0.0.0.0:6060":   false,
		"10.0.0.4:6060":  false,
		"nonsense":       false,
	} {
		if err := checkPprofAddress(addr); (err == nil) != ok {
			t.Errorf("checkPprofAddress(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}
