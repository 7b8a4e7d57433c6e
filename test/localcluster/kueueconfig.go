package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// KueueConfigWith writes config/kueue's Configuration with the top-level
// fields of set replaced, into a new temporary directory, for
// Options.KueueConfigFile; the caller removes filepath.Dir(path).
func KueueConfigWith(root string, set map[string]any) (path string, err error) {
	data, err := os.ReadFile(filepath.Join(root, "config", "kueue", "controller_manager_config.yaml"))
	if err != nil {
		return "", err
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("reading Kueue's Configuration: %w", err)
	}
	for k, v := range set {
		cfg[k] = v
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "kueue-config-")
	if err != nil {
		return "", err
	}
	path = filepath.Join(dir, "kueue.yaml")
	return path, os.WriteFile(path, out, 0o644)
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
