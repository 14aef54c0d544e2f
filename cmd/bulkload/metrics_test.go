package main

import (
	"os"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parseMetrics reads a --metrics-file as node_exporter's textfile
// collector does and returns each series' value by name and labels
// ("bulkload_rows_total{status=submitted}"), job_name left out.
func parseMetrics(t *testing.T, path string) (map[string]float64, map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	vals, jobs := map[string]float64{}, map[string]bool{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if l.GetName() == "job_name" {
					jobs[l.GetValue()] = true
					continue
				}
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				vals[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				vals[key] = m.GetGauge().GetValue()
			}
		}
	}
	return vals, jobs
}
