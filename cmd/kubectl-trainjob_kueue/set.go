package main

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/trainjob-kueue/trainjob-kueue/trainjob"
)

// setFlags are --set PATH=VALUE edits, in the order given.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, ",") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// applySets edits job by each PATH=VALUE: PATH is a dotted path under spec
// (trainer.numNodes) unless it starts with spec. or metadata. ("\." for a
// dot inside a key: trainer.resourcesPerNode.limits.nvidia\.com/gpu);
// VALUE is read as YAML (2 is a number, true a boolean, 4Gi a string).
func applySets(job *trainjob.TrainJob, sets []string) (*trainjob.TrainJob, error) {
	if len(sets) == 0 {
		return job, nil
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	if err != nil {
		return nil, err
	}
	for _, s := range sets {
		path, raw, ok := strings.Cut(s, "=")
		if !ok || path == "" {
			return nil, fmt.Errorf("--set %s: want PATH=VALUE, e.g. --set trainer.numNodes=2", s)
		}
		var value any
		if err := yaml.Unmarshal([]byte(raw), &value); err != nil {
			return nil, fmt.Errorf("--set %s: the value is not YAML: %w", s, err)
		}
		// YAML's numbers arrive as float64; a whole one is an integer
		// field's value.
		if f, ok := value.(float64); ok && f == float64(int64(f)) {
			value = int64(f)
		}
		keys := splitPath(path)
		if keys[0] != "spec" && keys[0] != "metadata" {
			keys = append([]string{"spec"}, keys...)
		}
		if err := setPath(obj, keys, value); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	out := &trainjob.TrainJob{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, out); err != nil {
		return nil, fmt.Errorf("--set: the edited job is not a TrainJob: %w", err)
	}
	return out, nil
}

// splitPath splits a dotted path, "\." being a dot inside a key.
func splitPath(path string) []string {
	var keys []string
	var key strings.Builder
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '\\' && i+1 < len(path) && path[i+1] == '.':
			key.WriteByte('.')
			i++
		case path[i] == '.':
			keys = append(keys, key.String())
			key.Reset()
		default:
			key.WriteByte(path[i])
		}
	}
	return append(keys, key.String())
}

// setPath sets obj's field at keys, making the maps on the way.
func setPath(obj map[string]any, keys []string, value any) error {
	for i, k := range keys[:len(keys)-1] {
		next, ok := obj[k]
		if !ok || next == nil {
			m := map[string]any{}
			obj[k], obj = m, m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not an object (a list or a value): set a field under an object", strings.Join(keys[:i+1], "."))
		}
		obj = m
	}
	obj[keys[len(keys)-1]] = value
	return nil
}
