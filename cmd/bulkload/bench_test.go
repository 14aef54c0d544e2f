package main

import (
	"path/filepath"
	"testing"

	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
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
		if res.code != exitRowsFailed {
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
		if res.code != exitRowsFailed && res.code != exitOK {
			b.Fatalf("exit %d: %s", res.code, res.stderr)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}
