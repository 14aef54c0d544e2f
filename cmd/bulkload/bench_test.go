package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/summary"
)

// writeSynthetic writes n realistic rows (mixed formats, 2% flawed) to a
// CSV file and returns its path.
func writeSynthetic(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "leads.csv")
	if err := synth.WriteCSVFile(path, synth.Defaults(), n); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkValidate measures `bulkload validate` per row, results file
// included: go test ./cmd/bulkload -run - -bench Validate -benchmem.
func BenchmarkValidate(b *testing.B) {
	const rows = 100_000
	input := writeSynthetic(b, rows)
	results := filepath.Join(b.TempDir(), "r.csv")
	b.ResetTimer()
	for b.Loop() {
		res := runCLI(b, nil, "validate", "--results", results, input)
		if res.code != app.ExitRowsFailed {
			b.Fatalf("exit %d: %s", res.code, res.stderr)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}

// BenchmarkUpload measures a whole upload of 10,000 synthetic rows against
// an in-process simulator with no latency (client and server CPU together;
// bench/upload.sh measures the client alone, in its own process):
// go test ./cmd/bulkload -run - -bench Upload -benchtime 1x.
func BenchmarkUpload(b *testing.B) {
	const rows = 10_000
	input := writeSynthetic(b, rows)
	for b.Loop() {
		b.StopTimer()
		s := startTestSim(b, leadsim.Options{})
		results := filepath.Join(b.TempDir(), "r.csv")
		args := append([]string{"upload"}, s.args()...)
		args = append(args, "--results", results, "--rate", "0", "--concurrency", "16", "--progress", "off", input)
		b.StartTimer()
		res := runCLI(b, secretEnv(), args...)
		if res.code != app.ExitRowsFailed && res.code != app.ExitOK {
			b.Fatalf("exit %d: %s", res.code, res.stderr)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}

// writeRunFiles writes what a finished upload of n rows leaves: a results
// file (1 in 7 rows invalid, 1 in 11 failed, the rest submitted with a
// bid), its meta file and the summary beside it with an 8-hour timeline.
// With BULKLOAD_BENCH_DIR set, the files go there and stay (for measuring
// the binary: /usr/bin/time -v bulkload report DIR/run.results.csv).
func writeRunFiles(tb testing.TB, n int) string {
	tb.Helper()
	dir := os.Getenv("BULKLOAD_BENCH_DIR")
	if dir == "" {
		dir = tb.TempDir()
	}
	path := filepath.Join(dir, "run.results.csv")
	w, err := report.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	sum := &summary.Summary{Mode: "upload", Start: time.Unix(1e9, 0), End: time.Unix(1e9+8*3600, 0), Settings: map[string]any{"input": "run.csv"}}
	for i := range n {
		r := lead.Row{Row: i + 1, LeadID: fmt.Sprintf("L%07d", i+1), Status: lead.StatusSubmitted, ID: "3f2504e0-4f89-11d3-9a0c-0305e82c3301", ResultCode: 1013 + i%5, BidValue: "$15.00", Note: "qualified", Attempts: 1}
		switch {
		case i%7 == 0:
			r = lead.Row{Row: i + 1, LeadID: r.LeadID, Status: lead.StatusInvalid,
				Invalid: lead.RowErrors{{Row: i + 1, Field: lead.ZipCode, Header: "zip", Rule: "must be 5 digits", Value: "8002"}}}
		case i%11 == 0:
			r = lead.Row{Row: i + 1, LeadID: r.LeadID, Status: lead.StatusFailed, Error: "createLead: HTTP 502 Bad Gateway after 5 attempts", Attempts: 5}
		}
		if err := w.Write(r); err != nil {
			tb.Fatal(err)
		}
		sum.RowsRead++
		sum.Count(r)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	tr := summary.NewTimelineRecorder(sum.Start)
	for i := range 8 * 3600 {
		tr.Add(summary.Sample{Seconds: 1, Answered: int64(30 + i%50), InFlight: 8, ConcurrencyLimit: 8, LatencyP50Ms: 40, LatencyP95Ms: 90, RateLimit: 100})
	}
	sum.Timeline = tr.Timeline()
	if err := outfile.WriteMeta(path, &outfile.Meta{Input: "run.csv", InputSHA256: "ab", Rows: n}); err != nil {
		tb.Fatal(err)
	}
	if err := sum.WriteJSON(summary.Path(path)); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkReport1M measures `bulkload report` of a 1,000,000-row run from
// its files (results file, meta file, summary beside it): go test
// ./cmd/bulkload -run - -bench Report1M -benchtime 3x -benchmem. The
// rendering alone (what --report adds to a run) is htmlreport's
// BenchmarkRender1M.
func BenchmarkReport1M(b *testing.B) {
	results := writeRunFiles(b, 1_000_000)
	out := filepath.Join(b.TempDir(), "report.html")
	b.ResetTimer()
	for b.Loop() {
		if res := runCLI(b, nil, "report", "-o", out, results); res.code != app.ExitOK {
			b.Fatalf("exit %d: %s", res.code, res.stderr)
		}
	}
	if st, err := os.Stat(out); err == nil {
		b.ReportMetric(float64(st.Size()), "page-bytes")
	}
}

// BenchmarkReport1MCombined is BenchmarkReport1M with the results file
// named twice, so that the report combines them (app's combine reads
// every row of each): the path of a backfill's shards.
func BenchmarkReport1MCombined(b *testing.B) {
	results := writeRunFiles(b, 1_000_000)
	out := filepath.Join(b.TempDir(), "report.html")
	second := filepath.Join(filepath.Dir(results), "copy.results.csv")
	for _, suffix := range []string{"", ".meta", ".summary.json"} {
		data, err := os.ReadFile(results + suffix)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(second+suffix, data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if res := runCLI(b, nil, "report", "-o", out, results, second); res.code != app.ExitOK {
			b.Fatalf("exit %d: %s", res.code, res.stderr)
		}
	}
}
