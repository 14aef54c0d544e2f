package report

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/gocarina/gocsv"
)

var benchRows = flag.Int("rows", 1_000_000, "rows in the journal of BenchmarkCompact and BenchmarkLoadState")

// benchRow is a typical final line: a qualified, submitted lead with a note.
func benchRow(i int) lead.Row {
	return lead.Row{
		Row: i, LeadID: fmt.Sprintf("P-%08d", i), Ref: fmt.Sprintf("batch-7/%d", i), Status: lead.StatusSubmitted,
		ID: fmt.Sprintf("0b9f8a2e-1c1d-4f7e-9a53-%012d", i), ResultCode: 1013, Note: "Lead qualified, tier 2",
		BidValue: "$1,042.50", Attempts: 1,
	}
}

func BenchmarkWrite(b *testing.B) {
	for _, f := range []Format{FormatCSV, FormatJSONL} {
		b.Run(f.String(), func(b *testing.B) {
			w := NewWriter(io.Discard, f)
			r := benchRow(123456)
			r.Error = `a "quoted", error`
			b.ReportAllocs()
			for b.Loop() {
				if err := w.Write(r); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
	// gocsv writing the same record, for comparison: Writer uses
	// encoding/csv because this is slower. gocsvRow is the results record
	// as gocsv would bind it.
	type gocsvRow struct {
		Row        string `csv:"row"`
		LeadID     string `csv:"leadId"`
		Ref        string `csv:"ref"`
		Status     string `csv:"status"`
		ID         string `csv:"id"`
		ResultCode string `csv:"resultCode"`
		Note       string `csv:"note"`
		BidValue   string `csv:"bidValue"`
		Attempts   string `csv:"attempts"`
		Error      string `csv:"error"`
	}
	b.Run("gocsv", func(b *testing.B) {
		cw := gocsv.NewSafeCSVWriter(csv.NewWriter(io.Discard))
		r := benchRow(123456)
		c := []gocsvRow{{Row: "123456", LeadID: r.LeadID, Ref: r.Ref, Status: string(r.Status), ID: r.ID, ResultCode: "1013",
			Note: r.Note, BidValue: r.BidValue, Attempts: "1", Error: `a "quoted", error`}}
		b.ReportAllocs()
		for b.Loop() {
			if err := gocsv.MarshalCSVWithoutHeaders(c, cw); err != nil {
				b.Fatal(err)
			}
		}
		cw.Flush()
	})
}

// writeShuffledJournal writes a journal of n rows in shuffled completion
// order: one row in three qualifies and has a created line, its final line
// written up to 64 lines later.
func writeShuffledJournal(b *testing.B, path string, n int) {
	b.Helper()
	j, err := OpenJournal(path, false)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var later []lead.Row
	for _, i := range rng.Perm(n) {
		r := benchRow(i + 1)
		if i%3 != 0 {
			r.Status, r.ResultCode, r.BidValue = lead.StatusProcessed, 1020, ""
		} else {
			c := r
			c.Status = lead.StatusCreated
			if err := j.AppendDurable(c); err != nil {
				b.Fatal(err)
			}
			later = append(later, r)
			if len(later) < 64 {
				continue
			}
			r, later = later[0], later[1:]
		}
		if err := j.AppendDurable(r); err != nil {
			b.Fatal(err)
		}
	}
	for _, r := range later {
		if err := j.AppendDurable(r); err != nil {
			b.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		b.Fatal(err)
	}
}

// cpuTime is the process's user plus system CPU time so far: on a shared
// machine it says more than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureHeap runs fn and reports the heap it peaked at above the heap
// before (sampled every millisecond: a lower bound of the true peak), what
// stayed live after it, after a GC, and the CPU time it took.
func measureHeap(b *testing.B, fn func()) (peak, live uint64, cpu time.Duration) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		var ms runtime.MemStats
		var top uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			top = max(top, ms.HeapAlloc)
			select {
			case <-stop:
				done <- top
				return
			case <-t.C:
			}
		}
	}()
	c0 := cpuTime()
	fn()
	cpu = cpuTime() - c0
	close(stop)
	top := <-done
	runtime.ReadMemStats(&ms)
	top = max(top, ms.HeapAlloc)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return top - min(top, base), ms.HeapAlloc - min(ms.HeapAlloc, base), cpu
}

func copyFile(b *testing.B, dst, src string) {
	b.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCompact compacts a shuffled journal of -rows rows (the scan, the
// sort and the rewrite; not the scan OpenJournal(resume) does first).
func BenchmarkCompact(b *testing.B) {
	for _, ext := range []string{".csv", ".jsonl"} {
		b.Run(ext[1:], func(b *testing.B) {
			dir := b.TempDir()
			src := filepath.Join(dir, "journal"+ext)
			writeShuffledJournal(b, src, *benchRows)
			work := filepath.Join(dir, "work"+ext)
			var peak uint64
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				copyFile(b, work, src)
				f, err := os.Open(work)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				p, _, c := measureHeap(b, func() {
					if err := compact(f, work, FormatFor(work), os.Rename); err != nil {
						b.Fatal(err)
					}
				})
				peak, cpu = max(peak, p), max(cpu, c)
				f.Close()
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(cpu.Seconds(), "cpu-s/op")
			if st, err := os.Stat(src); err == nil {
				b.ReportMetric(float64(st.Size())/(1<<20), "journal-MB")
			}
		})
	}
}

func ext2name(ext string, compacted bool) string {
	if compacted {
		return ext[1:] + "-compacted"
	}
	return ext[1:] + "-journal"
}

// BenchmarkLoadState loads a shuffled journal of -rows rows (or the file
// compacted from it), then Gets every row once in row order, as resume does.
func BenchmarkLoadState(b *testing.B) {
	for _, tc := range []struct {
		ext       string
		compacted bool
	}{{".csv", false}, {".jsonl", false}, {".csv", true}, {".jsonl", true}} {
		name := ext2name(tc.ext, tc.compacted)
		b.Run(name, func(b *testing.B) {
			ext := tc.ext
			path := filepath.Join(b.TempDir(), "journal"+ext)
			writeShuffledJournal(b, path, *benchRows)
			if tc.compacted {
				j, err := OpenJournal(path, true)
				if err != nil {
					b.Fatal(err)
				}
				if err := j.Compact(); err != nil {
					b.Fatal(err)
				}
			}
			var peak, live uint64
			var getAll, cpu time.Duration
			for b.Loop() {
				var s *State
				p, l, c := measureHeap(b, func() {
					var err error
					if s, err = LoadState(path); err != nil {
						b.Fatal(err)
					}
				})
				peak, live, cpu = max(peak, p), max(live, l), max(cpu, c)
				if s.Len() != *benchRows {
					b.Fatalf("Len = %d, want %d", s.Len(), *benchRows)
				}
				b.StopTimer()
				t0 := cpuTime()
				for i := 1; i <= *benchRows; i++ {
					if r, ok := s.Get(i); !ok || r.Row != i {
						b.Fatalf("Get(%d) = %+v, %v", i, r, ok)
					}
				}
				getAll = max(getAll, cpuTime()-t0)
				b.StartTimer()
				s.Close()
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(live)/float64(*benchRows), "live-B/row")
			b.ReportMetric(float64(getAll.Nanoseconds())/float64(*benchRows), "get-cpu-ns/row")
			b.ReportMetric(cpu.Seconds(), "cpu-s/op")
		})
	}
}
