package main

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"

	"github.com/trainjob-kueue/trainjob-kueue/test/monitoring"
)

// curve is one series of a panel, named by the target's legend format.
type curve struct {
	legend string
	points []point
}

type point struct {
	at    time.Time
	value float64
}

// panelData is a panel and what its queries returned.
type panelData struct {
	title  string
	curves []curve
}

// grafanaVariables are the dashboard's variables as an admin with one
// manager would have them set.
var grafanaVariables = strings.NewReplacer("$job", ".+", "${job}", ".+")

// evaluate runs each panel's queries over the span, as Grafana asks
// Prometheus for a range. A query Prometheus refuses is an error: the
// dashboard would show an error there too.
func evaluate(ctx context.Context, q storage.Queryable, d monitoring.Dashboard, sp span, step time.Duration) ([]panelData, error) {
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 10_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	var out []panelData
	for _, p := range d.QueryPanels() {
		pd := panelData{title: p.Title}
		for _, t := range p.Targets {
			expr := grafanaVariables.Replace(t.Expr)
			query, err := engine.NewRangeQuery(ctx, q, nil, expr, sp.start, sp.end, step)
			if err != nil {
				return nil, fmt.Errorf("panel %q: %s: %w", p.Title, t.Expr, err)
			}
			res := query.Exec(ctx)
			if res.Err != nil {
				query.Close()
				return nil, fmt.Errorf("panel %q: %s: %w", p.Title, t.Expr, res.Err)
			}
			m, err := res.Matrix()
			if err != nil {
				query.Close()
				return nil, fmt.Errorf("panel %q: %s: %w", p.Title, t.Expr, err)
			}
			for _, s := range m {
				c := curve{legend: legend(t.LegendFormat, s.Metric.Map())}
				for _, f := range s.Floats {
					// Grafana leaves a gap where a query has no number
					// (a quantile of no observations is NaN).
					if math.IsNaN(f.F) || math.IsInf(f.F, 0) {
						continue
					}
					c.points = append(c.points, point{time.UnixMilli(f.T), f.F})
				}
				if len(c.points) > 0 {
					pd.curves = append(pd.curves, c)
				}
			}
			query.Close()
		}
		out = append(out, pd)
	}
	return out, nil
}

var legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// legend fills a Grafana legend format ("{{reason}}") from a series' labels.
func legend(format string, lbls map[string]string) string {
	if format == "" {
		return fmt.Sprint(lbls)
	}
	return legendLabel.ReplaceAllStringFunc(format, func(m string) string {
		return lbls[legendLabel.FindStringSubmatch(m)[1]]
	})
}
