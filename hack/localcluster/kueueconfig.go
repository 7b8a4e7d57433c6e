package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// kueueConfig is Kueue's Configuration as a document: the local cluster
// rewrites the fields it decides and keeps every other one as written.
// It is the one place the local cluster edits Kueue's Configuration.
type kueueConfig map[string]any

// inTreeFramework is Kueue's built-in TrainJob integration, and
// inTreeMultiKueue the generic MultiKueue adapter Kueue refuses beside it.
const (
	inTreeFramework  = "trainer.kubeflow.org/trainjob"
	inTreeMultiKueue = "TrainJob.v1alpha1.trainer.kubeflow.org"
)

func readKueueConfig(path string) (kueueConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg := kueueConfig{}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

func (c kueueConfig) write(path string) error {
	out, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// object is the map under key, made when absent.
func (c kueueConfig) object(key string) map[string]any {
	m, _ := c[key].(map[string]any)
	if m == nil {
		m = map[string]any{}
		c[key] = m
	}
	return m
}

// frameworks are integrations.frameworks.
func (c kueueConfig) frameworks() []any { return asSlice(c.object("integrations")["frameworks"]) }

// setIntegration turns Kueue's built-in TrainJob integration on (intree)
// or off (ours, none). With it, TrainJob leaves
// multiKueue.externalFrameworks (Kueue refuses a generic MultiKueue
// adapter for a kind it has a built-in one for); with ours it comes back,
// as config/kueue lists it: on a MultiKueue manager that is the one edit
// the runbook makes, so that Kueue's generic adapter dispatches the jobs
// trainjob-kueue queues.
func (c kueueConfig) setIntegration(integration string) {
	frameworks := slices.DeleteFunc(slices.Clone(c.frameworks()), func(f any) bool { return f == inTreeFramework })
	external := slices.DeleteFunc(slices.Clone(asSlice(c.object("multiKueue")["externalFrameworks"])), func(f any) bool {
		m, _ := f.(map[string]any)
		return m["name"] == inTreeMultiKueue
	})
	switch integration {
	case IntegrationInTree:
		frameworks = append(frameworks, inTreeFramework)
	case IntegrationOurs:
		external = append(external, map[string]any{"name": inTreeMultiKueue})
	}
	c.object("multiKueue")["externalFrameworks"] = external
	c.object("integrations")["frameworks"] = frameworks
}

// integration is what setIntegration last set.
func (c kueueConfig) integration() string {
	if slices.Contains(c.frameworks(), any(inTreeFramework)) {
		return IntegrationInTree
	}
	return IntegrationOurs
}

// setFeatureGates sets gates ("A=true,B=false") over the Configuration's.
func (c kueueConfig) setFeatureGates(list string) error {
	set, err := parseGates(list)
	if err != nil {
		return err
	}
	gates := c.object("featureGates")
	for g, on := range set {
		gates[g] = on
	}
	return nil
}

// forMultiKueueManager: a playground's short timeouts, and only the
// frameworks whose kinds the workers have (MultiKueue watches every enabled
// framework's kind on every worker and fails to connect to a worker missing
// one of their CRDs: "no matches for kind"): Job, JobSet and, while it is
// on, Kueue's built-in TrainJob integration (every worker runs Trainer).
func (c kueueConfig) forMultiKueueManager() {
	mk := c.object("multiKueue")
	// Kueue's default of 15 minutes suits production; a playground shows
	// a lost worker's jobs moving on within a minute.
	if _, set := mk["workerLostTimeout"]; !set {
		mk["workerLostTimeout"] = "30s"
	}
	if _, set := mk["gcInterval"]; !set {
		mk["gcInterval"] = "20s"
	}
	c.object("integrations")["frameworks"] = slices.DeleteFunc(slices.Clone(c.frameworks()), func(f any) bool {
		return f != "batch/job" && f != "jobset.x-k8s.io/jobset" && f != inTreeFramework
	})
}

// forDRA: the fake driver's devices counted as the quota resource
// example.com/gpu (KueueDRAIntegration is on by default from v0.18).
func (c kueueConfig) forDRA() {
	c.object("resources")["deviceClassMappings"] = []any{
		map[string]any{"name": DRAQuotaResource, "deviceClassNames": []any{DRADeviceClass}},
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// KueueConfigWith writes config/kueue's Configuration with the top-level
// fields of set replaced, into a new temporary directory, for
// Options.KueueConfigFile; the caller removes filepath.Dir(path).
func KueueConfigWith(root string, set map[string]any) (path string, err error) {
	cfg, err := readKueueConfig(filepath.Join(root, "config", "kueue", "controller_manager_config.yaml"))
	if err != nil {
		return "", fmt.Errorf("reading Kueue's Configuration: %w", err)
	}
	for k, v := range set {
		cfg[k] = v
	}
	dir, err := os.MkdirTemp("", "kueue-config-")
	if err != nil {
		return "", err
	}
	path = filepath.Join(dir, "kueue.yaml")
	return path, cfg.write(path)
}

// parseGates reads "A=true,B=false" (Kueue's --feature-gates syntax).
func parseGates(list string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, kv := range strings.Split(list, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		name, value, ok := strings.Cut(kv, "=")
		on, err := strconv.ParseBool(value)
		if !ok || name == "" || err != nil {
			return nil, fmt.Errorf("%q is not GATE=true or GATE=false", kv)
		}
		out[name] = on
	}
	return out, nil
}
