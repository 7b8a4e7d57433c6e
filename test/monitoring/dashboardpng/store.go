package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb"
)

// store is a Prometheus TSDB in a temporary directory holding the scrapes.
type store struct {
	*tsdb.DB
}

func openStore(dir string) (*store, error) {
	db, err := tsdb.Open(dir, nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		return nil, fmt.Errorf("opening a TSDB: %w", err)
	}
	return &store{db}, nil
}

// span is the time the scrapes cover.
type span struct{ start, end time.Time }

// scrapeLabels are the target labels Prometheus would add: the dashboard
// selects job=~"$job".
var scrapeLabels = map[string]string{"job": "trainjob-kueue", "pod": "trainjob-kueue-0", "instance": "127.0.0.1"}

// load appends every scrape in dir (<unix ms>.prom, in time order).
func (s *store) load(dir string) (span, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.prom"))
	if err != nil {
		return span{}, err
	}
	type scrape struct {
		at   time.Time
		file string
	}
	var all []scrape
	for _, f := range files {
		ms, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(f), ".prom"), 10, 64)
		if err != nil {
			return span{}, fmt.Errorf("%s: not named <unix ms>.prom", f)
		}
		all = append(all, scrape{time.UnixMilli(ms), f})
	}
	if len(all) < 2 {
		return span{}, fmt.Errorf("%s holds %d scrapes: a rate needs two at least", dir, len(all))
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	for _, sc := range all {
		if err := s.append(sc.file, sc.at); err != nil {
			return span{}, err
		}
	}
	return span{all[0].at, all[len(all)-1].at}, nil
}

func (s *store) append(file string, at time.Time) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(f)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	app := s.Appender(context.Background())
	for name, fam := range families {
		for _, m := range fam.GetMetric() {
			for _, smp := range samples(name, fam.GetType(), m) {
				if _, err := app.Append(0, smp.labels, at.UnixMilli(), smp.value); err != nil {
					_ = app.Rollback()
					return fmt.Errorf("%s: appending %s: %w", file, smp.labels, err)
				}
			}
		}
	}
	return app.Commit()
}

type sample struct {
	labels labels.Labels
	value  float64
}

// samples are the series one metric of a family exposes, as Prometheus'
// scrape would store them (a histogram's _bucket{le}, _sum and _count).
func samples(name string, typ dto.MetricType, m *dto.Metric) []sample {
	base := map[string]string{}
	for k, v := range scrapeLabels {
		base[k] = v
	}
	for _, lp := range m.GetLabel() {
		base[lp.GetName()] = lp.GetValue()
	}
	series := func(name string, value float64, extra ...string) sample {
		l := map[string]string{"__name__": name}
		for k, v := range base {
			l[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return sample{labels.FromMap(l), value}
	}
	switch typ {
	case dto.MetricType_COUNTER:
		return []sample{series(name, m.GetCounter().GetValue())}
	case dto.MetricType_GAUGE:
		return []sample{series(name, m.GetGauge().GetValue())}
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		out := []sample{series(name+"_sum", h.GetSampleSum()), series(name+"_count", float64(h.GetSampleCount()))}
		inf := false
		for _, b := range h.GetBucket() {
			inf = inf || math.IsInf(b.GetUpperBound(), 1)
			out = append(out, series(name+"_bucket", float64(b.GetCumulativeCount()), "le", formatLe(b.GetUpperBound())))
		}
		if !inf { // implied by the text format
			out = append(out, series(name+"_bucket", float64(h.GetSampleCount()), "le", "+Inf"))
		}
		return out
	case dto.MetricType_SUMMARY:
		sm := m.GetSummary()
		out := []sample{series(name+"_sum", sm.GetSampleSum()), series(name+"_count", float64(sm.GetSampleCount()))}
		for _, q := range sm.GetQuantile() {
			out = append(out, series(name, q.GetValue(), "quantile", strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64)))
		}
		return out
	default:
		return []sample{series(name, m.GetUntyped().GetValue())}
	}
}

func formatLe(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
