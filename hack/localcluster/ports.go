package localcluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Ports are chosen below the kernel's ephemeral range. A port the kernel
// hands out for 127.0.0.1:0 is free when asked, but until the component
// binds it (seconds later, after the binaries start) any outbound
// connection on the machine may take it as its source port: seen as
// "bind: address already in use" while three clusters came up at once, and
// a component restarted on its port has the same gap. Below the range only
// listeners take ports. A claim file per port keeps bring-ups that run at
// the same time, in other processes, from choosing the same port before
// their components bind it.
const (
	lowestPort = 10000
	// claimLife is how long a claimed port is not handed out again even
	// when nothing listens on it: a cluster's components are restarted on
	// their ports (the reliability tier kills the manager), and a cluster
	// lives for a test run at most.
	claimLife = 3 * time.Hour
)

// FreePorts returns n loopback ports that nothing listens on, that no other
// caller was handed within claimLife, and that no outbound connection can
// take meanwhile.
func FreePorts(n int) ([]int, error) {
	hi := ephemeralStart()
	if hi-lowestPort < 1000 {
		return nil, fmt.Errorf("the ephemeral port range starts at %d: too few ports below it", hi)
	}
	return freePorts(filepath.Join(os.TempDir(), "trainjob-kueue-ports"), lowestPort, hi, n)
}

// freePorts chooses n ports in [lo, hi), with the claims in dir.
func freePorts(dir string, lo, hi, n int) ([]int, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	unlock, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()

	now := time.Now()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries > 50*n {
			return nil, fmt.Errorf("no free port in %d–%d after %d tries", lo, hi-1, tries)
		}
		p := lo + rand.IntN(hi-lo)
		claim := filepath.Join(dir, strconv.Itoa(p))
		if st, err := os.Stat(claim); err == nil && now.Sub(st.ModTime()) < claimLife {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		l.Close()
		if err := os.WriteFile(claim, nil, 0o666); err != nil {
			return nil, err
		}
		if err := os.Chtimes(claim, now, now); err != nil {
			return nil, err
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// FreePort is FreePorts(1).
func FreePort() (int, error) {
	ps, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}

// ephemeralStart is the first port of the kernel's ephemeral range (Linux's
// default where it cannot be read).
func ephemeralStart() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 32768
	}
	p, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return p
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, errors.Join(fmt.Errorf("locking %s: %w", path, err), f.Close())
	}
	return func() { f.Close() }, nil
}
