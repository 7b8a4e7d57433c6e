package localcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ForTests names a test suite's cluster after base and the releases the
// suite runs on (E2E_TRAINER_VERSION, E2E_KUEUE_VERSION,
// E2E_KUBERNETES_VERSION, unless the suite
// pins a release in o), so suites and releases never share one, and fills
// o's settings with those releases.
func ForTests(base string, o Options) Options {
	if o.TrainerVersion == "" {
		o.TrainerVersion = os.Getenv("E2E_TRAINER_VERSION")
	}
	if o.KueueVersion == "" {
		o.KueueVersion = os.Getenv("E2E_KUEUE_VERSION")
	}
	if o.KubernetesVersion == "" {
		o.KubernetesVersion = os.Getenv("E2E_KUBERNETES_VERSION")
	}
	o.Name = base
	for _, v := range []string{o.TrainerVersion, o.KueueVersion, o.KubernetesVersion} {
		if v != "" {
			o.Name += "-" + v
		}
	}
	if o.Progress == nil {
		o.Progress = os.Stderr
	}
	return o
}

// UpForTests brings up the cluster o names (ForTests) and returns it with
// what takes it down again: nothing when E2E_KEEP is set, to look at it
// afterwards.
func UpForTests(ctx context.Context, o Options) (*Cluster, func(), error) {
	c, err := Up(ctx, o)
	if err != nil {
		return nil, nil, fmt.Errorf("bringing up the local control plane %s: %w", o.Name, err)
	}
	down := func() {
		if os.Getenv("E2E_KEEP") != "" {
			return
		}
		if err := Down(o.Root, o.Name, o.Progress); err != nil {
			fmt.Fprintf(o.Progress, "%s: %v\n", o.Name, err)
		}
	}
	return c, down, nil
}

// RunTests brings up a suite's cluster (ForTests(base, o)), its Kueue's
// Configuration config/kueue's with the fields of kueue set (none when
// nil), hands it and a client of scheme to use, runs m, and takes the
// cluster down (but with E2E_KEEP). o.Root defaults to the module's root.
// It returns m's exit code, or 1 when the cluster can't be had.
func RunTests(m interface{ Run() int }, base string, o Options, kueue map[string]any, scheme *runtime.Scheme, use func(*Cluster, client.Client)) int {
	ctx := context.Background()
	if o.Root == "" {
		root, err := moduleRoot()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", base, err)
			return 1
		}
		o.Root = root
	}
	if kueue != nil {
		cfg, err := KueueConfigWith(o.Root, kueue)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: Kueue's configuration: %v\n", base, err)
			return 1
		}
		defer os.RemoveAll(filepath.Dir(cfg))
		o.KueueConfigFile = cfg
	}
	c, down, err := UpForTests(ctx, ForTests(base, o))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", base, err)
		return 1
	}
	defer down()
	k8s, err := c.Client(scheme)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", base, err)
		return 1
	}
	use(c, k8s)
	code := m.Run()
	if code != 0 {
		c.ReportExited(os.Stderr, 30)
	}
	return code
}

// ReportExited writes, for each component no longer running, its name and
// the last lines of its log: a suite that failed says whether its cluster
// lost a part under it (a controller that exited leaves jobs waiting on
// nothing) before the cluster and its logs are gone.
func (c *Cluster) ReportExited(w io.Writer, lines int) {
	for _, name := range c.Exited() {
		fmt.Fprintf(w, "%s: %s is not running; the end of its log:\n", filepath.Base(c.Dir), name)
		data, err := os.ReadFile(c.LogFile(name))
		if err != nil {
			fmt.Fprintf(w, "  (%v)\n", err)
			continue
		}
		all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		for _, l := range all[max(0, len(all)-lines):] {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

// moduleRoot is the directory of the go.mod above the working directory
// (a test's package directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
