package localcluster

import (
	"fmt"
	"io"
	"os"
	"strings"
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
