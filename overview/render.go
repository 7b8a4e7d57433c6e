package overview

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/trainjob-kueue/trainjob-kueue/lifecycle"
)

// Write prints rows as output says: "" (a table), "wide" (more columns),
// "json" or "yaml".
func Write(w io.Writer, rows []Row, output string, allNamespaces bool) error {
	switch output {
	case "", "wide":
		return table(w, rows, output == "wide", allNamespaces)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Items []Row `json:"items"`
		}{rows})
	case "yaml":
		data, err := yaml.Marshal(struct {
			Items []Row `json:"items"`
		}{rows})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return fmt.Errorf("-o %s: use wide, json or yaml", output)
}

func table(w io.Writer, rows []Row, wide, allNamespaces bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var head []string
	if allNamespaces {
		head = append(head, "NAMESPACE")
	}
	head = append(head, "TRAINJOB", "QUEUE", "STATE", "POSITION", "FLAVORS", "PODS", "GPUS", "WAITED", "PREEMPTED")
	if wide {
		head = append(head, "CLUSTERQUEUE", "PRIORITY", "EXPECTED START", "WHY")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		var cells []string
		if allNamespaces {
			cells = append(cells, r.Namespace)
		}
		position := "-"
		if r.Position != nil {
			position = fmt.Sprint(*r.Position)
		}
		cells = append(cells, r.Name, or(r.Queue), string(r.State), position, or(strings.Join(r.Flavors, ",")),
			fmt.Sprintf("%d/%d", r.PodsRunning, r.Pods), fmt.Sprint(r.GPUs), waited(r), fmt.Sprint(r.Preemptions))
		if wide {
			priority := "-"
			if r.Priority != nil {
				priority = fmt.Sprint(*r.Priority)
			}
			cells = append(cells, or(r.ClusterQueue), priority, r.ExpectedStart.Short(), or(r.Why))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

func or(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// waited is how long a queued job waited, as kubectl prints ages: a job
// admitted at once waited 0s, which is the truth; a job not queued waits
// for nothing ("-").
func waited(r Row) string {
	if r.State == lifecycle.NotQueued {
		return "-"
	}
	return max(r.Waited, 0).String()
}
