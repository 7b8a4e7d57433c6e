package localcluster

import (
	"net"
	"slices"
	"strconv"
	"testing"
)

func TestFreePortsAreNotHandedOutTwiceNorWhileListenedOn(t *testing.T) {
	// A range of 20 loopback ports below the ephemeral range (no outbound
	// connection takes them meanwhile); one is held by a listener for the
	// whole test.
	var held net.Listener
	for p := lowestPort + 10; held == nil; p += 20 {
		held, _ = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	}
	defer held.Close()
	heldPort := held.Addr().(*net.TCPAddr).Port
	lo := heldPort - 10
	hi := lo + 20
	dir := t.TempDir()

	first, err := freePorts(dir, lo, hi, 9)
	if err != nil {
		t.Fatal(err)
	}
	second, err := freePorts(dir, lo, hi, 9)
	if err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(first), second...)
	slices.Sort(all)
	if len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Errorf("a port was handed out twice: %v then %v", first, second)
	}
	for _, p := range all {
		if p < lo || p >= hi {
			t.Errorf("port %d outside [%d, %d)", p, lo, hi)
		}
		if p == heldPort {
			t.Errorf("port %d is listened on, but was handed out", p)
		}
	}
	// 20 ports, 18 claimed and one listened on: a third caller cannot have
	// two.
	if got, err := freePorts(dir, lo, hi, 2); err == nil {
		t.Errorf("freePorts handed out %v from an exhausted range", got)
	}
}

func TestFreePortsAreBelowTheEphemeralRange(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ports, err := FreePorts(30)
	if err != nil {
		t.Fatal(err)
	}
	start := ephemeralStart()
	for _, p := range ports {
		if p < lowestPort || p >= start {
			t.Errorf("port %d is not in [%d, %d)", p, lowestPort, start)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("port %d was handed out but cannot be listened on: %v", p, err)
			continue
		}
		l.Close()
	}
}
