package summary_test

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/bulkload/bulkload/htmlreport"
	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/summary"
)

// sidecarSeed is the file a run writes beside its results file: counts,
// details, a timeline with a mark, an outage.
func sidecarSeed() []byte {
	s := &summary.Summary{Mode: "upload", Start: time.Unix(1e9, 0), End: time.Unix(1e9+5, 0), RowsRead: 4}
	for i, st := range []lead.Status{lead.StatusSubmitted, lead.StatusProcessed, lead.StatusFailed, lead.StatusInvalid} {
		bid := "$12.50"
		s.Count(lead.Row{Row: i + 1, Status: st, ResultCode: 1013 + i%2*100, BidValue: bid, ID: "x", Error: "e"})
	}
	r := summary.NewTimelineRecorder(s.Start)
	for range 3 {
		r.Add(summary.Sample{Seconds: 1, Answered: 3, Status429: 1, InFlight: 2, ConcurrencyLimit: 4, LatencyP50Ms: 9, LatencyP95Ms: 30, RateLimit: 50})
	}
	r.Mark(s.Start.Add(time.Second), time.Second, summary.MarkOutage, "away")
	s.Timeline = r.Timeline()
	s.Outages = []summary.Outage{{Start: s.Start, Seconds: 1, Cause: "503"}}
	code := 1
	s.ExitCode = &code
	b, _ := json.Marshal(s.JSON())
	return b
}

// FuzzReadSidecar decodes any bytes as the summary beside a results file,
// as bulkload report and bulkload summary read it (Read is ReadFile and
// Decode): Decode either refuses them or
// returns a summary that every reader of it takes without a panic (its
// text, its JSON, a merge with itself, its timeline merged, the HTML
// report of it alone and combined with itself).
func FuzzReadSidecar(f *testing.F) {
	f.Add(sidecarSeed())
	f.Add([]byte(`{"mode":"upload","exitCode":0,"processed":2,"rowsRead":2,"timeline":{"start":"2026-01-01T00:00:00Z","intervalSeconds":1,"samples":[{"t":-5,"seconds":1}]}}`))
	f.Add([]byte(`{"mode":"summary","failures":[{"status":"failed","reason":"x","count":3,"firstRows":[1,2,3],"notes":["n"]}],"keptLeads":{"count":1,"rows":[4]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := summary.Decode(data)
		if err != nil {
			return
		}
		_ = s.WriteText(io.Discard, summary.Hints{Resume: "--resume", Rate: "--rate"})
		if _, err := json.Marshal(s.JSON()); err != nil {
			t.Fatalf("JSON of a summary read back: %v", err)
		}
		merged := summary.Merge([]*summary.Summary{s, s}, []*outfile.Meta{nil, {InputSHA256: "x", Rows: 3}})
		merged.Timeline = summary.MergeTimelines([]*summary.Timeline{s.Timeline, s.Timeline})
		_ = merged.WriteText(io.Discard, summary.Hints{Resume: "--resume", Rate: "--rate"})
		if err := htmlreport.Render(io.Discard, &htmlreport.Report{Summary: s, Generated: time.Unix(0, 0)}); err != nil {
			t.Fatalf("Render of a summary read back: %v", err)
		}
		parts := []htmlreport.Part{{Results: "a.csv", Summary: s}, {Results: "b.csv", Summary: s}}
		if err := htmlreport.Render(io.Discard, &htmlreport.Report{Summary: merged, Parts: parts, Generated: time.Unix(0, 0)}); err != nil {
			t.Fatalf("Render of a combined summary read back: %v", err)
		}
	})
}
