package app

import (
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// TestOutageBound: a run that stopped in an outage was bound by the
// service being away, not by the capacity its hang's timeouts seemed to
// show ("pin it with --concurrency 1"); an outage waited out leaves what
// bound the run as it was.
func TestOutageBound(t *testing.T) {
	capacity := &summary.BoundBy{Kind: summary.BoundCapacity, Text: "the service's capacity: ... pin it with --concurrency 1", ConcurrencyWaitShare: 0.9}
	start := time.Date(2026, 11, 26, 21, 46, 26, 0, time.UTC)
	hang := submitter.Outage{Start: start, End: start.Add(30 * time.Second), Cause: "no reply within 5s"}
	waited := hang
	stopped := hang
	stopped.GaveUp = true
	for _, tc := range []struct {
		name    string
		outages []submitter.Outage
		kind    string
		text    []string
	}{
		{"no outage", nil, summary.BoundCapacity, []string{"--concurrency 1"}},
		{"outage waited out", []submitter.Outage{waited}, summary.BoundCapacity, []string{"--concurrency 1"}},
		{"stopped in a hang", []submitter.Outage{waited, stopped}, summary.BoundOutage, []string{"the service being away (no reply within 5s from 21:46:26)", "after 30 s", "--resume"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := outageBound(capacity, tc.outages)
			if got.Kind != tc.kind || got.ConcurrencyWaitShare != 0.9 {
				t.Errorf("outageBound = %+v, want kind %s with the shares kept", got, tc.kind)
			}
			for _, w := range tc.text {
				if !strings.Contains(got.Text, w) {
					t.Errorf("outageBound text %q lacks %q", got.Text, w)
				}
			}
			if tc.kind == summary.BoundOutage && strings.Contains(got.Text, "pin it") {
				t.Errorf("outageBound text %q advises a pin for a hang", got.Text)
			}
		})
	}
	if outageBound(nil, []submitter.Outage{stopped}) != nil {
		t.Error("outageBound(nil, ...) is not nil: no call, nothing bound the run")
	}
}
