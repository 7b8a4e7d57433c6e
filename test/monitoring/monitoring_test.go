package monitoring

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

// Every alert of the chart's PrometheusRule and every query of its Grafana
// dashboard is PromQL that Prometheus' own parser accepts, and names only
// metrics the manager serves (metrics/testdata/exported.txt, which
// `go test ./metrics/` keeps true): a renamed metric would otherwise leave a
// panel empty and an alert silent, without an error anywhere.
func TestTheChartsAlertsAndDashboardQueryExportedMetrics(t *testing.T) {
	exported := exportedMetrics(t)
	queries := chartQueries(t)
	alerts, panels := 0, 0
	for _, q := range queries {
		if q.alert {
			alerts++
		} else {
			panels++
		}
		expr, err := promql.ParseExpr(q.expr)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", q.where, q.expr, err)
			continue
		}
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q names no metric", q.where, q.expr)
		}
		for _, n := range names {
			if !exported[n] {
				t.Errorf("%s queries %s, which the manager does not export (metrics/testdata/exported.txt)", q.where, n)
			}
		}
	}
	// The chart's four alerts and the dashboard's panels were all found: a
	// changed layout must not make this test pass on nothing.
	if alerts != 4 || panels < 10 {
		t.Errorf("found %d alert expressions and %d dashboard queries, want 4 and at least 10", alerts, panels)
	}
}

// The parser is what this test relies on: it must refuse what Prometheus
// would refuse, and see each metric a query names.
func TestMetricNamesOfAQuery(t *testing.T) {
	expr, err := promql.ParseExpr(`histogram_quantile(0.9, sum by (le) (rate(a_seconds_bucket{job=~"$job"}[5m]))) / on() group_left b_total + {__name__="c_jobs"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(metricNames(expr), " "); got != "a_seconds_bucket b_total c_jobs" {
		t.Errorf("metricNames = %q, want %q", got, "a_seconds_bucket b_total c_jobs")
	}
	if _, err := promql.ParseExpr(`sum by (le (rate(x[5m]))`); err == nil {
		t.Error("an unbalanced query parsed")
	}
}

// promql is the parser Prometheus' server uses, with its defaults.
var promql = parser.NewParser(parser.Options{})

// query is one PromQL expression of the chart and where it is.
type query struct {
	where, expr string
	alert       bool
}

// chartQueries renders the chart with its PrometheusRule and dashboard on,
// as helm would (test/install's renderer), and collects their expressions.
func chartQueries(t *testing.T) []query {
	t.Helper()
	cmd := exec.Command("go", "run", "./helmrender", "-chart", "../../charts/trainjob-kueue",
		"-set", "monitoring.prometheusRule.enabled=true", "-set", "monitoring.dashboard.enabled=true")
	cmd.Dir = "../install"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rendering the chart: %v: %s", err, stderr.String())
	}
	var qs []query
	for _, doc := range strings.Split(string(out), "\n---") {
		var obj struct {
			Kind     string            `json:"kind"`
			Data     map[string]string `json:"data"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Groups []struct {
					Rules []struct {
						Alert string `json:"alert"`
						Expr  string `json:"expr"`
					} `json:"rules"`
				} `json:"groups"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("the rendered chart: %v", err)
		}
		switch obj.Kind {
		case "PrometheusRule":
			for _, g := range obj.Spec.Groups {
				for _, r := range g.Rules {
					qs = append(qs, query{where: "alert " + r.Alert, expr: r.Expr, alert: true})
				}
			}
		case "ConfigMap":
			for key, data := range obj.Data {
				if !strings.HasSuffix(key, ".json") {
					continue
				}
				d, err := ParseDashboard([]byte(data))
				if err != nil {
					t.Fatalf("ConfigMap %s %s: %v", obj.Metadata.Name, key, err)
				}
				for _, p := range d.QueryPanels() {
					for _, target := range p.Targets {
						qs = append(qs, query{where: "panel " + p.Title, expr: target.Expr})
					}
				}
			}
		}
	}
	return qs
}

// metricNames are the series names an expression selects.
func metricNames(expr parser.Expr) []string {
	var names []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == "__name__" {
				name = m.Value
			}
		}
		names = append(names, name)
		return nil
	})
	return names
}

// exportedMetrics: the manager's metric names and the series a histogram
// of each name would have.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("../../metrics/testdata/exported.txt")
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, n := range strings.Fields(string(data)) {
		exported[n] = true
		for _, series := range []string{"_bucket", "_sum", "_count"} {
			exported[n+series] = true
		}
	}
	return exported
}
