package summary

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSummaryListsOutages: each outage is a line of the summary and an
// object of the JSON's "outages", as the run report reads it.
func TestSummaryListsOutages(t *testing.T) {
	start := time.Date(2026, 11, 24, 2, 31, 7, 0, time.UTC)
	s := &Summary{Mode: "upload", Outages: []Outage{
		{Start: start, Seconds: 14, IdentityProvider: true, Cause: "503 temporarily_unavailable"},
		{Start: start.Add(time.Hour), Seconds: 600.2, Cause: "no reply within 60s", StoppedRun: true},
	}}
	var b strings.Builder
	if err := s.WriteText(&b, flagHints()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"outage           02:31:07 the identity provider, 14 s (503 temporarily_unavailable): waited out",
		"outage           03:31:07 the service, 600 s (no reply within 60s): the run stopped",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	raw, err := json.Marshal(s.JSON())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Outages []map[string]any `json:"outages"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Outages) != 2 || got.Outages[0]["start"] != "2026-11-24T02:31:07Z" || got.Outages[0]["seconds"] != 14.0 ||
		got.Outages[0]["identityProvider"] != true || got.Outages[1]["stoppedRun"] != true || got.Outages[1]["cause"] != "no reply within 60s" {
		t.Errorf("JSON outages = %v", got.Outages)
	}
	if raw, _ := json.Marshal((&Summary{Mode: "upload"}).JSON()); strings.Contains(string(raw), `"outages"`) {
		t.Error("a run without outages has an outages field")
	}
}
