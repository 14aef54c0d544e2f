package ledger

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
)

// BenchmarkRun is the ledger's work for one lead of an upload, as the
// engine does it: claims in batches ahead of the calls (of up to 64, the
// engine's claimer), then each lead's answers (created and submitted for a
// qualified lead, processed for the others) from 16 workers at once.
// cpu-µs/lead is the process's CPU; bench/ledger.sh measures the ledger
// within a whole upload.
func BenchmarkRun(b *testing.B) {
	for _, st := range stores() {
		b.Run(st.name, func(b *testing.B) {
			l := open(b, st.where(b))
			r := begin(b, l, ClaimPolicy{})
			defer end(b, r)
			keys := make(chan ClaimItem, 64)
			cpu0 := cpuTime()
			b.ResetTimer()
			go func() {
				defer close(keys)
				for i := 1; i <= b.N; {
					items := make([]ClaimItem, 0, 64)
					for ; i <= b.N && len(items) < 64; i++ {
						items = append(items, ClaimItem{Key: l.KeyOf(fmt.Sprintf("B-%d", i), input(fmt.Sprint(i))), Row: i})
					}
					if _, err := r.ClaimBatch(context.Background(), items); err != nil {
						b.Error(err)
						return
					}
					for _, it := range items {
						keys <- it
					}
				}
			}()
			var wg sync.WaitGroup
			var n atomic.Int64
			for range 16 {
				wg.Go(func() {
					for it := range keys {
						i := it.Row
						n.Add(1)
						if i%2 == 0 {
							r.Record(Answer{Key: it.Key, Row: i, Status: lead.StatusCreated, Created: true, ServiceID: fmt.Sprint("id-", i), ResultCode: 1014, Bid: "$42.50"})
							r.Record(Answer{Key: it.Key, Row: i, Status: lead.StatusSubmitted, ServiceID: fmt.Sprint("id-", i), ResultCode: 1014, Bid: "$42.50"})
						} else {
							r.Record(Answer{Key: it.Key, Row: i, Status: lead.StatusProcessed, Created: true, ServiceID: fmt.Sprint("id-", i), ResultCode: 1001})
						}
					}
				})
			}
			wg.Wait()
			if err := r.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/lead")
		})
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkContentHash is a lead's content hash (the claimer computes one
// for every lead before its claim).
func BenchmarkContentHash(b *testing.B) {
	l := open(b, b.TempDir()+"/ledger.sqlite")
	ten := 10000
	in := lead.Input{FirstName: "Maria", LastName: "Gonzalez", DateOfBirth: "1981-04-12", Email: "maria.gonzalez@example.com",
		CellPhone: "6175550123", Address1: "12 Elm Street", City: "Springfield", State: "MA", ZipCode: "01103",
		LoanAmount: &ten, LeadID: "LG201-000123", SocialSecurityNumber: "123456789", GrossAnnualIncome: &ten}
	b.ReportAllocs()
	for b.Loop() {
		l.ContentHash(in)
	}
}
