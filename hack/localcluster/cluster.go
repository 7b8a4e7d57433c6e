// Package localcluster runs a whole Kubernetes control plane for
// trainjob-kueue from binaries built from Go modules: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler with the coscheduling plugin, kwok
// playing the kubelet of fake GPU nodes, Kueue, JobSet, Kubeflow Trainer and
// trainjob-kueue itself. Each runs as its own process in the background,
// under its own client certificate, with its webhooks registered on loopback
// URLs, so the cluster outlives the command that started it. It is the e2e
// tier's cluster and the product's playground (make cluster-up, make demo).
package localcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Settings decide what a cluster runs; a running cluster is reused only
// with the same settings.
type Settings struct {
	// KubernetesVersion of the control plane ("" for
	// DefaultKubernetesVersion): KubernetesWorkloadAPI for Kubernetes'
	// Workload API (GenericWorkload) and a kube-scheduler of its own, or
	// KubernetesCoscheduling for scheduler-plugins' coscheduling.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// TrainerVersion of Kubeflow Trainer (and the JobSet release it pins).
	TrainerVersion string `json:"trainerVersion"`
	// KueueVersion of Kueue: its CRDs, webhooks, configuration and manager.
	KueueVersion string `json:"kueueVersion"`
	// Integration is "ours" (Kueue's built-in TrainJob integration off,
	// trainjob-kueue on) or "intree" (Kueue's own, for comparison).
	Integration string `json:"integration"`
	// MultiKueue is MultiKueueManager for the manager cluster of a
	// MultiKueue set-up; workers are ordinary clusters.
	MultiKueue string `json:"multiKueue,omitempty"`
	// KueueFeatureGates set Kueue's feature gates over its Configuration's
	// ("PriorityBoost=true,…"); trainjob-kueue reads the same
	// Configuration, so it sees them too.
	KueueFeatureGates string `json:"kueueFeatureGates,omitempty"`
	// KueueConfigSHA identifies a replacement Kueue Configuration ("" for
	// the one in config/kueue).
	KueueConfigSHA string `json:"kueueConfigSHA,omitempty"`
	// EndpointRouting: kube-apiserver reaches webhook and aggregated API
	// Services through their EndpointSlices (--enable-aggregator-routing)
	// instead of their cluster IPs, which nothing routes here. A webhook
	// configuration registered with a `service:` clientConfig, as
	// config/default ships it, is then answered by whatever its Service's
	// EndpointSlices name: on this cluster, servers on this host at its
	// own non-loopback address (HostIP; slices refuse loopback ones).
	// Kueue's visibility API is off on such a cluster: its server listens
	// on loopback only.
	EndpointRouting bool `json:"endpointRouting,omitempty"`
	// DRA: Dynamic Resource Allocation with a fake driver (dra.go): the
	// DeviceClass gpu.example.com, devices on the kwok GPU nodes, counted
	// by Kueue as example.com/gpu.
	DRA bool `json:"dra,omitempty"`
	// Provisioning: ProvisioningRequests (Kueue's provisioning admission
	// check, as clouds obtain GPU nodes) with a fake provisioner
	// (provisioning.go) standing in for cluster-autoscaler.
	Provisioning bool `json:"provisioning,omitempty"`
	// OursReplicas: 2 runs a second replica of trainjob-kueue (leader
	// election on, as a Deployment's replicas) and a loopback Service in
	// front of both (service.go); 0 or 1, one replica.
	OursReplicas int `json:"oursReplicas,omitempty"`
	// NoQueueCondition runs trainjob-kueue with --queue-condition=false:
	// no condition of ours on TrainJobs (the bench's condition-off
	// figures, docs/benchmark.md).
	NoQueueCondition bool `json:"noQueueCondition,omitempty"`
}

// Options for Up.
type Options struct {
	// Name of the cluster: its state lives in <Root>/.cluster/<Name>.
	Name string
	// Root of the trainjob-kueue checkout.
	Root string
	Settings
	// KueueConfigFile replaces config/kueue/controller_manager_config.yaml.
	KueueConfigFile string
	// Progress receives what is being built or started, and for how long.
	Progress io.Writer
	// AuditTrainJobBodies records the request and response bodies of every
	// write to a TrainJob in the audit log (every version the API server
	// held), for tests that judge each one; other requests stay at
	// Metadata level.
	AuditTrainJobBodies bool
	// KubectlLater: Up returns once the cluster is up, with kubectl (which
	// no component runs) still building; Cluster.KubectlBuilt waits for it. On a
	// cold machine make demo's jobs run while it builds.
	KubectlLater bool
}

// workloadAPI: the cluster serves Kubernetes' Workload API.
func (s Settings) workloadAPI() bool { return s.KubernetesVersion == KubernetesWorkloadAPI }

// MultiKueueManager: a cluster that dispatches TrainJobs to workers. It runs
// no scheduler and no nodes, and Trainer's controller only from v2.3, the
// first release that leaves jobs with spec.managedBy of MultiKueue alone;
// before that, Trainer's CRDs alone (docs/multikueue.md).
const MultiKueueManager = "manager"

// Integrations.
const (
	IntegrationOurs   = "ours"
	IntegrationInTree = "intree"
	// IntegrationNone: no TrainJob integration at all (the benchmark's
	// floor, which queues bare Workloads).
	IntegrationNone = "none"
)

// Cluster is a running local control plane.
type Cluster struct {
	Dir        string
	Kubeconfig string
	state      *state
	// kubectlBuilt finishes kubectl's build (Options.KubectlLater), or nil.
	kubectlBuilt func() error
}

// KubectlBuilt waits until Kubectl is in place: at once unless the cluster
// was started with Options.KubectlLater and kubectl is still building.
func (c *Cluster) KubectlBuilt() error {
	if c.kubectlBuilt == nil {
		return nil
	}
	return c.kubectlBuilt()
}

// state is what .cluster/<name>/state.json remembers.
type state struct {
	Settings Settings       `json:"settings"`
	Ports    map[string]int `json:"ports"`
	PIDs     map[string]int `json:"pids"`
	// Commands started each component, so Restart can start it again.
	Commands map[string]command `json:"commands,omitempty"`
}

// command is how a component was started.
type command struct {
	Bin  string   `json:"bin"`
	Args []string `json:"args"`
	Env  []string `json:"env,omitempty"`
}

// Dir is where the named cluster keeps its state.
func Dir(root, name string) string { return filepath.Join(root, ".cluster", name) }

// ErrOtherSettings reports a cluster already running with other settings.
var ErrOtherSettings = errors.New("cluster is running with other settings")

// Up builds whatever is missing, starts every component in the background,
// waits until all are healthy and writes the kubeconfig. On a cluster
// already running with the same settings it does nothing.
func Up(ctx context.Context, o Options) (*Cluster, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.TrainerVersion == "" {
		o.TrainerVersion = DefaultTrainerVersion
	}
	if o.KueueVersion == "" {
		o.KueueVersion = DefaultKueueVersion
	}
	if o.KubernetesVersion == "" {
		o.KubernetesVersion = DefaultKubernetesVersion
	}
	if o.KubernetesVersion != KubernetesCoscheduling && o.KubernetesVersion != KubernetesWorkloadAPI {
		return nil, fmt.Errorf("KUBERNETES_VERSION=%q: use %s (scheduler-plugins' coscheduling) or %s (Kubernetes' Workload API)", o.KubernetesVersion, KubernetesCoscheduling, KubernetesWorkloadAPI)
	}
	if o.Integration == "" {
		o.Integration = IntegrationOurs
	}
	if o.Integration != IntegrationOurs && o.Integration != IntegrationInTree && o.Integration != IntegrationNone {
		return nil, fmt.Errorf("INTEGRATION=%q: use ours, intree or none", o.Integration)
	}
	if o.MultiKueue != "" && o.MultiKueue != MultiKueueManager {
		return nil, fmt.Errorf("MultiKueue role %q: use %q or nothing", o.MultiKueue, MultiKueueManager)
	}
	if o.OursReplicas < 0 || o.OursReplicas > 2 {
		return nil, fmt.Errorf("REPLICAS=%d: trainjob-kueue runs 1 or 2 replicas here", o.OursReplicas)
	}
	if o.DRA && !draSupported(o.KueueVersion) {
		return nil, fmt.Errorf("DRA=true: Kueue %s does not count DRA devices; use Kueue v0.18 or later", o.KueueVersion)
	}
	if _, err := parseGates(o.KueueFeatureGates); err != nil {
		return nil, fmt.Errorf("KUEUE_FEATURE_GATES: %w", err)
	}
	if o.KueueConfigFile != "" {
		data, err := os.ReadFile(o.KueueConfigFile)
		if err != nil {
			return nil, fmt.Errorf("KUEUE_CONFIG: %w", err)
		}
		sum := sha256.Sum256(data)
		o.KueueConfigSHA = hex.EncodeToString(sum[:8])
	}
	dir := Dir(o.Root, o.Name)
	c := &Cluster{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig")}
	if st, err := readState(dir); err == nil {
		if st.running() {
			if st.Settings != o.Settings {
				return nil, fmt.Errorf("%w (%+v, asked for %+v): run `make cluster-down CLUSTER=%s` first", ErrOtherSettings, st.Settings, o.Settings, o.Name)
			}
			fmt.Fprintf(o.Progress, "cluster %q is already running with these settings; KUBECONFIG=%s\n", o.Name, c.Kubeconfig)
			c.state = st
			return c, nil
		}
	}
	// Whatever is left of an earlier run (a crash, a reboot, a failed
	// start kept for its logs) goes.
	if err := Down(o.Root, o.Name, io.Discard); err != nil {
		return nil, err
	}
	b := &bringUp{o: o, c: c, start: time.Now()}
	if err := b.run(ctx); err != nil {
		// Never leave half a cluster running, but keep its logs to read.
		stopAll(pidFiles(dir), io.Discard)
		return nil, err
	}
	return c, nil
}

// Existing returns a running cluster by name.
func Existing(root, name string) (*Cluster, error) {
	dir := Dir(root, name)
	st, err := readState(dir)
	if err != nil || !st.running() {
		return nil, fmt.Errorf("cluster %q is not running (make cluster-up CLUSTER=%s)", name, name)
	}
	return &Cluster{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"), state: st}, nil
}

// Settings of the running cluster.
func (c *Cluster) Settings() Settings { return c.state.Settings }

// Logs is the log file of a component.
func (c *Cluster) Logs(component string) string {
	return filepath.Join(c.Dir, "logs", component+".log")
}

// AuditLog is the API server's audit log (Metadata level; TrainJob writes
// with their bodies under Options.AuditTrainJobBodies).
func (c *Cluster) AuditLog() string { return filepath.Join(c.Dir, "audit.log") }

// Down stops every process of the named cluster ("all": every cluster) by
// pid and removes its state.
func Down(root, name string, progress io.Writer) error {
	if name == "all" {
		entries, err := os.ReadDir(filepath.Join(root, ".cluster"))
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		for _, e := range entries {
			if e.IsDir() {
				if err := Down(root, e.Name(), progress); err != nil {
					return err
				}
			}
		}
		return nil
	}
	dir := Dir(root, name)
	if st, err := readState(dir); err == nil {
		stopAll(st.PIDs, progress)
	}
	// Processes started before state.json was written have pid files.
	stopAll(pidFiles(dir), progress)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	fmt.Fprintf(progress, "cluster %q is down\n", name)
	return nil
}

func readState(dir string) (*state, error) {
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return nil, err
	}
	st := &state{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, err
	}
	return st, nil
}

func (st *state) write(dir string) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "state.json"), data, 0o600)
}

func (st *state) running() bool {
	if len(st.PIDs) == 0 {
		return false
	}
	for _, pid := range st.PIDs {
		if !alive(pid) {
			return false
		}
	}
	return true
}

// SettingsOf reads the settings of the local cluster kept in dir.
func SettingsOf(dir string) (Settings, error) {
	st, err := readState(dir)
	if err != nil {
		return Settings{}, err
	}
	return st.Settings, nil
}

// Open returns the local cluster whose state is in dir (where its
// kubeconfig is).
func Open(dir string) (*Cluster, error) {
	st, err := readState(dir)
	if err != nil {
		return nil, fmt.Errorf("%s is no local cluster: %w", dir, err)
	}
	return &Cluster{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"), state: st}, nil
}

// PID of one of the cluster's processes ("kueue", "trainjob-kueue", …), 0
// when it runs none.
func (c *Cluster) PID(component string) int { return c.state.PIDs[component] }

// Exited names the components whose process is no longer running, sorted.
// A long run must notice one that exited under load (a manager that lost
// its leader election exits) rather than wait on a cluster that stopped.
func (c *Cluster) Exited() []string {
	var out []string
	for name, pid := range c.state.PIDs {
		if !alive(pid) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// LogFile of a component: what it wrote to stdout and stderr.
func (c *Cluster) LogFile(component string) string {
	return filepath.Join(c.Dir, "logs", component+".log")
}

// Port of one of the cluster's listeners ("ours-metrics", "apiserver", …).
func (c *Cluster) Port(name string) int { return c.state.Ports[name] }

// Kubectl is the kubectl binary next to the kubeconfig.
func (c *Cluster) Kubectl() string { return filepath.Join(c.Dir, "bin", "kubectl") }
