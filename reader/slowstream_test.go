package reader

import (
	"io"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
)

// TestSlowStreamRowsFlowBeforeEOF feeds a header and one row through a pipe
// that stays open, as `tail -f export.csv | bulkload validate -` would: the
// reader must hand the row over without waiting for more input or EOF.
// (Files with lone "\r" line ends, old Mac exports, are told apart by the
// absence of "\n" in their first 64 KiB, so a stream of those waits for
// that much or for EOF.)
func TestSlowStreamRowsFlowBeforeEOF(t *testing.T) {
	for _, tc := range []struct{ name, data, format string }{
		{"csv comma", "leadId,dateOfBirth\nL1,1980-01-02\n", "csv"},
		{"csv semicolon CRLF", "leadId;dateOfBirth\r\nL1;1980-01-02\r\n", "csv"},
		{"jsonl", `{"leadId":"L1","dateOfBirth":"1980-01-02"}` + "\n", "jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			go pw.Write([]byte(tc.data)) // the writer then goes quiet, pipe open
			f, err := ParseFormat(tc.format)
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan Record, 1)
			go func() {
				r, err := NewReader(pr, "-", Options{Format: f})
				if err != nil {
					t.Errorf("NewReader: %v", err)
					close(got)
					return
				}
				rec, err := r.next()
				if err != nil {
					t.Errorf("Next: %v", err)
				}
				got <- rec
			}()
			select {
			case rec := <-got:
				if rec.Values[lead.LeadID] != "L1" || rec.Err != nil {
					t.Errorf("first record = %+v, want leadId L1", rec)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the first row never came: the reader waits for more input than the row")
				pw.CloseWithError(io.ErrClosedPipe)
			}
		})
	}
}
