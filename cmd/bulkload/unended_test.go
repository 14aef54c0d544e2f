package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// growingInput writes n qualifying rows in format ("csv" or "jsonl"),
// loanAmount last and 48500, with the file's bytes ending inside the last
// row's loanAmount ("48"), as a partner's upload in progress leaves it.
// It returns the input's path and the rest of the file.
func growingInput(t *testing.T, dir, format string, n int) (path, rest string) {
	t.Helper()
	recs := readCSVFile(t, qualifyingRows(t, dir, n))
	la := slices.Index(recs[0], "loanAmount")
	var b bytes.Buffer
	for i, rec := range recs {
		rec = append(slices.Delete(slices.Clone(rec), la, la+1), rec[la])
		if i > 0 {
			rec[len(rec)-1] = "48500"
		}
		switch {
		case format == "csv":
			b.WriteString(strings.Join(rec, ",") + "\n")
		case i > 0:
			obj := map[string]string{}
			head := append(slices.Delete(slices.Clone(recs[0]), la, la+1), "loanAmount")
			var line bytes.Buffer
			line.WriteString("{")
			for j, k := range head {
				obj[k] = rec[j]
				v, _ := json.Marshal(rec[j])
				if k == "loanAmount" {
					v = []byte(rec[j])
				}
				if j > 0 {
					line.WriteString(",")
				}
				line.WriteString(`"` + k + `":` + string(v))
			}
			line.WriteString("}\n")
			b.Write(line.Bytes())
		}
	}
	full := strings.TrimSuffix(b.String(), "\n")
	cut := strings.LastIndex(full, "48500") + 2
	path = filepath.Join(dir, "export."+format)
	if err := os.WriteFile(path, []byte(full[:cut]), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, full[cut:] + "\n"
}

// TestUploadInputStillBeingWritten is issue 28 item 5: the job starts
// while the partner's upload is in progress; the bytes read end inside the
// last row's last field (48 of 48500), and the file grows while the run
// goes on (here: once the check before the first call is over, at the
// preflight). That row is never sent: the run exits 5 naming the input
// and leaves the row (no line in the results file), and --resume, once the
// file is complete, sends it, whole, once. CSV and JSONL.
func TestUploadInputStillBeingWritten(t *testing.T) {
	t.Parallel()
	const n = 5
	for _, format := range []string{"csv", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			input, rest := growingInput(t, dir, format, n)
			var (
				mu    sync.Mutex
				grow  sync.Once
				loans = map[string][]string{} // loanAmount sent, by leadId
			)
			s := startTestSimHandler(t, leadsim.Options{}, func(s *leadsim.Server) http.Handler {
				h := s.Handler()
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					if bytes.Contains(body, []byte("__typename")) {
						// The partner's upload goes on while the run starts.
						grow.Do(func() { appendFile(t, input, rest) })
					}
					var req struct {
						Variables struct {
							Input struct {
								LeadID     string          `json:"leadId"`
								LoanAmount json.RawMessage `json:"loanAmount"`
							} `json:"input"`
						} `json:"variables"`
					}
					if json.Unmarshal(body, &req) == nil && req.Variables.Input.LeadID != "" {
						mu.Lock()
						loans[req.Variables.Input.LeadID] = append(loans[req.Variables.Input.LeadID], string(req.Variables.Input.LoanAmount))
						mu.Unlock()
					}
					h.ServeHTTP(w, r)
				})
			})
			results := filepath.Join(dir, "results.csv")
			rejects := filepath.Join(dir, "rejects."+format)
			args := checkUploadArgs(s, "--results", results, "--rejects", rejects, input)
			res := runCLI(t, secretEnv(), args...)
			if res.code != app.ExitIO || !strings.Contains(res.stderr, input) || !strings.Contains(res.stderr, "still being written") {
				t.Errorf("run over a file still being written: exit %d, want %d naming %s as still being written\n%s", res.code, app.ExitIO, input, res.stderr)
			}
			rows := readResults(t, results)
			if len(rows) != n-1 {
				t.Errorf("results has %d lines, want %d: the cut last row has none, for --resume", len(rows), n-1)
			}
			for _, r := range rows {
				if r["status"] != "submitted" {
					t.Errorf("row %s ended %s, want submitted", r["row"], r["status"])
				}
			}
			header := 0
			if format == "csv" {
				header = 1
			}
			if b, _ := os.ReadFile(rejects); bytes.Count(b, []byte("\n")) > header {
				t.Errorf("the rejects file holds a row, want none (the cut row is no invalid row):\n%s", b)
			}
			mu.Lock()
			for id, sent := range loans {
				for _, v := range sent {
					if v != "48500" {
						t.Errorf("leadId %s was sent with loanAmount %s, want 48500", id, v)
					}
				}
			}
			mu.Unlock()

			res = runCLI(t, secretEnv(), append(args[:len(args)-1:len(args)-1], "--resume", input)...)
			if res.code != app.ExitOK {
				t.Errorf("--resume once the file is complete: exit %d, want 0\n%s", res.code, res.stderr)
			}
			for row, r := range finalByRow(t, results, n) {
				if r["status"] != "submitted" {
					t.Errorf("after --resume, row %d ended %s, want submitted", row, r["status"])
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(loans) != n {
				t.Errorf("%d leads sent, want %d", len(loans), n)
			}
			for id, sent := range loans {
				if len(sent) != 1 || sent[0] != "48500" {
					t.Errorf("leadId %s was sent %v, want once with loanAmount 48500", id, sent)
				}
			}
		})
	}
}

// appendFile appends s to the file at path.
func appendFile(t *testing.T, path, s string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Error(err)
	}
}
