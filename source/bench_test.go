package source

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bulkload/bulkload/bench/synth"
)

// BenchmarkSource reads, decodes, maps and checks 100,000 generated rows
// (mixed formats, 2% flawed) through a Source, with one worker and with
// the default workers: the parallel path validate and upload use. CPU time
// per row is what the cores share; compare ns/row between the two on a
// machine with more than two cores:
//
//	go test ./source -run - -bench Source -benchtime 3x -cpu 1,2,8,16
func BenchmarkSource(b *testing.B) {
	const rows = 100_000
	input := writeGenerated(b, rows)
	for _, workers := range []int{1, 0} {
		name := "workers=" + strconv.Itoa(workers)
		if workers == 0 {
			name = "workers=default(" + strconv.Itoa(DefaultWorkers()) + ")"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				s, err := Open(context.Background(), input, nil, Config{Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				n := each(b, s, func(Item) {})
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				if n != rows {
					b.Fatalf("%d rows, want %d", n, rows)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}

func writeGenerated(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "leads.csv")
	if err := synth.WriteCSVFile(path, synth.Defaults(), n); err != nil {
		tb.Fatal(err)
	}
	return path
}
