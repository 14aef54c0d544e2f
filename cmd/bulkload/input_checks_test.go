package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/leadsim"
)

// sampleRecords reads samples/leads.csv as records, header first.
func sampleRecords(t *testing.T) [][]string {
	t.Helper()
	recs := readCSVFile(t, filepath.Join(samples, "leads.csv"))
	return recs
}

// writeCSV writes records to path (resultstest.WriteCSV).
func writeCSV(t *testing.T, path string, recs [][]string) { resultstest.WriteCSV(t, path, recs) }

func totalCreates(s *sim) int {
	n := 0
	for _, c := range s.Stats().CreateCalls {
		n += c
	}
	return n
}

func checkUploadArgs(s *sim, extra ...string) []string {
	return slices.Concat([]string{"upload"}, s.args(), []string{"--rate", "0", "--progress", "off"}, extra)
}

// TestSummaryHashesTheBytesRead: rows appended while an upload runs are not
// read; the summary's hash is of the bytes read and it says the file grew;
// --resume then sends the appended rows.
func TestSummaryHashesTheBytesRead(t *testing.T) {
	t.Parallel()
	recs := sampleRecords(t)
	s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 40 * time.Millisecond}})
	dir := t.TempDir()
	input := filepath.Join(dir, "export.csv")
	results := filepath.Join(dir, "export.results.csv")
	summary := filepath.Join(dir, "summary.json")
	writeCSV(t, input, recs[:41])
	original, _ := os.ReadFile(input)

	cmd, out := subprocess(t, checkUploadArgs(s, "--concurrency", "1", "--summary-json", summary, input)...)
	waitForLines(t, results, 3, 30*time.Second)
	var tail bytes.Buffer
	w := csv.NewWriter(&tail)
	if err := w.WriteAll(recs[41:]); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(input, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(tail.Bytes()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("upload: %v\n%s", err, out)
	}

	m := readSummaryJSON(t, summary)
	want := sha256.Sum256(original)
	if m["inputSha256"] != hex.EncodeToString(want[:]) {
		t.Errorf("summary inputSha256 = %v, want the hash of the %d bytes read", m["inputSha256"], len(original))
	}
	if m["inputBytes"] != float64(len(original)) || m["inputGrewBytes"] != float64(tail.Len()) || m["rowsRead"] != float64(40) {
		t.Errorf("summary inputBytes %v, inputGrewBytes %v, rowsRead %v; want %d, %d, 40", m["inputBytes"], m["inputGrewBytes"], m["rowsRead"], len(original), tail.Len())
	}
	if !strings.Contains(out.String(), "the input grew by") {
		t.Errorf("the summary does not say the input grew\n%s", out)
	}

	res := runCLI(t, secretEnv(), checkUploadArgs(s, "--resume", input)...)
	if res.code != app.ExitOK {
		t.Fatalf("--resume: exit %d\n%s", res.code, res.stderr)
	}
	finalByRow(t, results, 50)
	for id, n := range s.Stats().CreateCalls {
		if n != 1 {
			t.Errorf("leadId %s created %d times", id, n)
		}
	}
}

// runStdin runs bulkload in-process with stdin and the simulator's secret.
func runStdin(t testing.TB, stdin []byte, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	env := secretEnv()
	env["XDG_STATE_HOME"] = t.TempDir() // a ledger of its own
	e := &app.Env{Getenv: func(k string) string { return env[k] }, Stdin: bytes.NewReader(stdin), Stdout: &out, Stderr: &errb, Now: time.Now, Deps: testDeps(t)}
	code := runEnv(context.Background(), e, args)
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}
