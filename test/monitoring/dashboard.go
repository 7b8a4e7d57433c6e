// Package monitoring reads the chart's Grafana dashboard: its panels and
// their PromQL. The chart's test checks every query against the metrics the
// manager exports, and dashboardpng draws the panels from a real scrape.
package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
)

// DashboardFile is the chart's dashboard, from this module's directory.
const DashboardFile = "../../charts/trainjob-kueue/files/monitoring/dashboard.json"

// Dashboard is the part of a Grafana dashboard's JSON that holds queries.
type Dashboard struct {
	Title  string  `json:"title"`
	Panels []Panel `json:"panels"`
}

// Panel is one panel; a row's panels are nested in it.
type Panel struct {
	Title   string   `json:"title"`
	Type    string   `json:"type"`
	Panels  []Panel  `json:"panels"`
	Targets []Target `json:"targets"`
}

// Target is one query of a panel.
type Target struct {
	Expr         string `json:"expr"`
	LegendFormat string `json:"legendFormat"`
}

// ParseDashboard reads a dashboard's JSON.
func ParseDashboard(data []byte) (Dashboard, error) {
	var d Dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return Dashboard{}, fmt.Errorf("the dashboard's JSON: %w", err)
	}
	return d, nil
}

// ReadDashboard reads the dashboard file at path.
func ReadDashboard(path string) (Dashboard, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Dashboard{}, err
	}
	return ParseDashboard(data)
}

// QueryPanels are the panels that query, rows' nested ones included, in
// the dashboard's order.
func (d Dashboard) QueryPanels() []Panel {
	var all []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			if len(p.Targets) > 0 {
				all = append(all, p)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return all
}
