package app

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/bulkload/bulkload/summary"
)

// TestReadEarlierPacing: a resume takes the rate limit and the concurrency
// the earlier run settled at from the summary beside its results file, only
// where the earlier run and this one are both auto, and capped by this
// run's --max-concurrency; nothing from a missing or unreadable summary.
func TestReadEarlierPacing(t *testing.T) {
	auto := func() *UploadOptions {
		return &UploadOptions{Rate: Rate{Auto: true}, Concurrency: Concurrency{Auto: true}, MaxConcurrency: 256}
	}
	fixed := &UploadOptions{Rate: Rate{PerSecond: 50}, Concurrency: Concurrency{N: 8}, MaxConcurrency: 256}
	capped := auto()
	capped.MaxConcurrency = 40
	found := &summary.Rate{Auto: true, LimitFound: true, CallsPerSecond: 145.5, Limit: 150}
	tests := []struct {
		name string
		sum  *summary.Summary // nil: no summary file
		raw  string           // the file's text instead
		up   *UploadOptions
		want earlierPacing
	}{
		{"both found", &summary.Summary{Rate: found, Concurrency: &summary.Concurrency{Auto: true, Settled: 52}}, "", auto(), earlierPacing{150, 52}},
		{"capped by this run's max", &summary.Summary{Rate: found, Concurrency: &summary.Concurrency{Auto: true, Settled: 52}}, "", capped, earlierPacing{150, 40}},
		{"no rate limit found", &summary.Summary{Rate: &summary.Rate{Auto: true, CallsPerSecond: 0}}, "", auto(), earlierPacing{}},
		{"an older summary: the limit from the settled rate", &summary.Summary{Rate: &summary.Rate{Auto: true, LimitFound: true, CallsPerSecond: 97}}, "", auto(), earlierPacing{100, 0}},
		{"the earlier run was fixed", &summary.Summary{Rate: &summary.Rate{CallsPerSecond: 50}, Concurrency: &summary.Concurrency{Limit: 8}}, "", auto(), earlierPacing{}},
		{"this run is fixed", &summary.Summary{Rate: found, Concurrency: &summary.Concurrency{Auto: true, Settled: 52}}, "", fixed, earlierPacing{}},
		{"no steady part", &summary.Summary{Concurrency: &summary.Concurrency{Auto: true, Limit: 16}}, "", auto(), earlierPacing{}},
		{"no summary", nil, "", auto(), earlierPacing{}},
		{"unreadable summary", nil, "{not json", auto(), earlierPacing{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "r.csv")
			if tc.sum != nil {
				b, err := json.Marshal(tc.sum)
				if err != nil {
					t.Fatal(err)
				}
				tc.raw = string(b)
			}
			if tc.raw != "" {
				if err := os.WriteFile(summary.Path(results), []byte(tc.raw), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got := readEarlierPacing(results, tc.up, slog.New(slog.DiscardHandler))
			if got.concurrency != tc.want.concurrency || got.rateLimit < tc.want.rateLimit*0.999 || got.rateLimit > tc.want.rateLimit*1.001 {
				t.Errorf("readEarlierPacing = %+v, want %+v", got, tc.want)
			}
		})
	}
}
