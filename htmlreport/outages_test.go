package htmlreport

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/summary"
)

// TestOutagesMarked: the outages the summary recorded replace the ones
// the engine guessed, and the page marks each with its cause.
func TestOutagesMarked(t *testing.T) {
	start := time.Unix(1e9, 0)
	tr := summary.NewTimelineRecorder(start)
	for range 60 {
		tr.Add(summary.Sample{Seconds: 1, Answered: 10})
	}
	tr.Mark(start.Add(5*time.Second), 3*time.Second, summary.MarkOutage, "guessed")
	tr.Mark(start.Add(50*time.Second), 0, summary.MarkSignal, "signal")
	s := &summary.Summary{Mode: "upload", Start: start, Timeline: tr.Timeline(), Outages: []summary.Outage{
		{Start: start.Add(4 * time.Second), Seconds: 20, Cause: "502 Bad Gateway"},
		{Start: start.Add(30 * time.Second), Seconds: 6, IdentityProvider: true, Cause: "503 temporarily_unavailable", StoppedRun: true},
	}}
	var b bytes.Buffer
	if err := Render(&b, &Report{Summary: s}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"0:04-0:24 outage: the service was away (502 Bad Gateway): waited out", "0:30-0:36 outage: the identity provider was away (503 temporarily_unavailable): the run stopped", "signal"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks the mark %q", want)
		}
	}
	if strings.Contains(page, "guessed") {
		t.Errorf("the engine's guessed outage is still marked beside the recorded ones")
	}
	if n := strings.Count(page, `class="mark band outage"`); n != 2*4 {
		t.Errorf("%d outage bands, want 2 on each of the 4 timeline charts", n)
	}
}
