package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
)

// An answer the upload cannot trust (issue 18): a createLead the service
// processed but answered with no usable answer, retried or resumed into
// the own-lead check; a null resultCode or lead id. Moved from
// cmd/bulkload's ambiguity_test.go (argv turned into options).

// TestUploadAmbiguousAnswers is issue 18 item 1: a createLead the service
// processed, answered with something that is no usable answer, leaves the
// row failed and ambiguous; --resume then gets "Duplicate of lead X" and
// must run the own-lead check, find X is the row's own and submit it,
// instead of ending the row processed with its qualified lead never
// submitted.
func TestUploadAmbiguousAnswers(t *testing.T) {
	// Not parallel with other tests: --timeout 2s, which a healthy call
	// must meet. Its cases, 3 rows each against a simulator of their own,
	// run side by side. (A --timeout of 500 ms was missed by healthy
	// calls, the preflight and the token requests under go test ./app
	// ./cmd/bulkload at load 15-17 on 2 CPUs: 3 of the 10 cases failed,
	// exit 4 or a row failed unambiguous. The answer held back is held 5 s,
	// longer than the timeout; the client's giving up ends it.)
	const n = 3
	tests := []struct {
		name  string
		alter alterFunc
	}{
		{"500 after processing", func(_ string, r reply) (reply, time.Duration) {
			return jsonReply(500, `{"errors":[{"message":"Internal server error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}`), 0
		}},
		{"524 after processing", func(_ string, r reply) (reply, time.Duration) {
			return reply{Status: 524, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<html>A timeout occurred</html>")}, 0
		}},
		{"200 over the size limit", func(_ string, r reply) (reply, time.Duration) {
			pad := strings.Repeat(" ", 2<<20)
			return jsonReply(200, string(bytes.TrimSuffix(r.Body, []byte("}")))+`,"pad":"`+pad+`"}`), 0
		}},
		{"resultCode as a string", func(_ string, r reply) (reply, time.Duration) {
			return jsonReply(200, string(resultCodeAs(t, r.Body, func(c int) string { return `"` + strconv.Itoa(c) + `"` }))), 0
		}},
		{"resultCode as 1.013e22", func(_ string, r reply) (reply, time.Duration) {
			return jsonReply(200, string(resultCodeAs(t, r.Body, func(int) string { return "1.013e22" }))), 0
		}},
		{"HTML 200", func(_ string, r reply) (reply, time.Duration) {
			return reply{Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<html><body>Thank you</body></html>")}, 0
		}},
		{"truncated JSON", func(_ string, r reply) (reply, time.Duration) {
			return jsonReply(200, string(r.Body[:len(r.Body)/2])), 0
		}},
		{"200 with data and errors", func(_ string, r reply) (reply, time.Duration) {
			return jsonReply(200, string(bytes.TrimSuffix(bytes.TrimSpace(r.Body), []byte("}")))+`,"errors":[{"message":"audit log write failed","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}`), 0
		}},
		{"createLead null with an error after the commit", func(_ string, r reply) (reply, time.Duration) {
			return jsonReply(200, `{"errors":[{"message":"notification failed after commit","path":["createLead"]}],"data":{"createLead":null}}`), 0
		}},
		{"timeout with no reply", func(_ string, r reply) (reply, time.Duration) {
			return r, 5 * time.Second
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startAlteringSim(t, leadsim.Options{}, tc.alter)
			dir := t.TempDir()
			input := qualifyingRows(t, dir, n)
			results := filepath.Join(dir, "results.csv")
			job := func(resume bool) *UploadJob {
				return uploadJob(input, results, func(j *UploadJob) {
					j.Up.MaxAttempts = 1
					j.Up.Timeout = 2 * time.Second
					j.Up.MaxConsecutiveFailures = 0
					j.Up.Resume = resume
				})
			}

			res := runUpload(t, s.Server, job(false))
			if res.code != ExitRowsFailed {
				t.Fatalf("first run exit = %d, want %d (rows failed)\n%s", res.code, ExitRowsFailed, res.stderr)
			}
			for row, r := range finalByRow(t, results, n) {
				if r["status"] != "failed" || !strings.HasPrefix(r["note"], "[ambiguous:") {
					t.Errorf("row %d ended %s, note %q, error %q; want failed and ambiguous: its lead may exist", row, r["status"], r["note"], r["error"])
				}
			}
			if got := s.Stats().ResultCodes; len(got) == 0 {
				t.Fatal("the service created no lead: the test tests nothing")
			}

			s.On.Store(false)
			res = runUpload(t, s.Server, job(true))
			if res.code != ExitOK {
				t.Errorf("--resume exit = %d, want 0\n%s", res.code, res.stderr)
			}
			for row, r := range finalByRow(t, results, n) {
				if r["status"] != "submitted" {
					t.Errorf("row %d ended %s: note %q; want its own lead found by the own-lead check and submitted", row, r["status"], r["note"])
				}
			}
			if got := s.Stats().Submissions; got != n {
				t.Errorf("the service holds %d submissions, want %d (one per row)", got, n)
			}
		})
	}
}

// TestUploadAmbiguousRetry: an attempt that timed out after the service
// processed it is retried in the same run; the retry's duplicate answer
// gets the own-lead check, and the row's own lead is submitted.
func TestUploadAmbiguousRetry(t *testing.T) {
	// Not parallel: --timeout 2s, which a healthy call must meet (500 ms,
	// as TestUploadAmbiguousAnswers's, was missed under load). The first
	// answer is held 5 s, longer than the timeout.
	const n = 3
	var s *alteringSim
	s = startAlteringSim(t, leadsim.Options{}, func(leadID string, r reply) (reply, time.Duration) {
		first := s.Seen(leadID) == 1
		if first {
			return jsonReply(500, `{"errors":[{"message":"Internal server error"}]}`), 5 * time.Second
		}
		return r, 0
	})
	dir := t.TempDir()
	input := qualifyingRows(t, dir, n)
	results := filepath.Join(dir, "results.csv")
	res := runUpload(t, s.Server, uploadJob(input, results, func(j *UploadJob) {
		j.Up.MaxAttempts = 3
		j.Up.Timeout = 2 * time.Second
	}))
	if res.code != ExitOK {
		t.Errorf("exit = %d, want 0\n%s", res.code, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "submitted" {
			t.Errorf("row %d ended %s: note %q; want its own lead found by the own-lead check and submitted", row, r["status"], r["note"])
		}
	}
	if got := s.Stats().Submissions; got != n {
		t.Errorf("the service holds %d submissions, want %d", got, n)
	}
}

// resultCodeAs rewrites the resultCode of a createLead answer.
func resultCodeAs(t *testing.T, body []byte, code func(int) string) []byte {
	t.Helper()
	var env struct {
		Data struct {
			CreateLead struct {
				ResultCode int `json:"resultCode"`
			} `json:"createLead"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Errorf("createLead answer: %v", err)
		return body
	}
	c := env.Data.CreateLead.ResultCode
	return bytes.Replace(body, []byte(`"resultCode":`+strconv.Itoa(c)), []byte(`"resultCode":`+code(c)), 1)
}

// withField rewrites one field of a createLead answer's result to raw JSON.
func withField(t *testing.T, body []byte, field, raw string) []byte {
	t.Helper()
	var env struct {
		Data struct {
			CreateLead map[string]json.RawMessage `json:"createLead"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Data.CreateLead == nil {
		t.Errorf("createLead answer %q: %v", body, err)
		return body
	}
	env.Data.CreateLead[field] = json.RawMessage(raw)
	out, err := json.Marshal(map[string]any{"data": map[string]any{"createLead": env.Data.CreateLead}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUploadNullResultCode is issue 18 item 6: a createLead answer with a
// null resultCode is no success. With Lead.Read the lead is read back by
// its id and settled (submitted when qualified); without it the row is
// unverified and the run exits 1, and a --resume once Lead.Read is granted
// settles it. A qualified answer without a lead id is unverified and the
// summary names the row.
func TestUploadNullResultCode(t *testing.T) {
	t.Parallel()
	const n = 3
	nullCode := func(_ string, r reply) (reply, time.Duration) {
		return jsonReply(200, string(withField(t, r.Body, "resultCode", "null"))), 0
	}
	// upload runs the job of n qualifying rows against s, and returns the
	// run, the job again with --resume, the results file and the summary
	// JSON's path.
	upload := func(t *testing.T, s *alteringSim) (runResult, func() *UploadJob, string, string) {
		dir := t.TempDir()
		input := qualifyingRows(t, dir, n)
		results := filepath.Join(dir, "results.csv")
		summary := filepath.Join(dir, "summary.json")
		job := func(resume bool) *UploadJob {
			return uploadJob(input, results, func(j *UploadJob) {
				j.In.SummaryJSON = summary
				j.Up.Resume = resume
			})
		}
		return runUpload(t, s.Server, job(false)), func() *UploadJob { return job(true) }, results, summary
	}

	t.Run("read back with Lead.Read", func(t *testing.T) {
		s := startAlteringSim(t, leadsim.Options{}, nullCode)
		res, _, results, _ := upload(t, s)
		if res.code != ExitOK {
			t.Errorf("exit = %d, want 0 (every lead read back and submitted)\n%s", res.code, res.stderr)
		}
		for row, r := range finalByRow(t, results, n) {
			if r["status"] != "submitted" || r["resultCode"] == "" {
				t.Errorf("row %d ended %s with code %q: note %q; want its code read back and the lead submitted", row, r["status"], r["resultCode"], r["note"])
			}
		}
		if got := s.Stats().Submissions; got != n {
			t.Errorf("the service holds %d submissions, want %d", got, n)
		}
	})

	t.Run("without Lead.Read, then resumed", func(t *testing.T) {
		client := leadsim.DefaultClient()
		client.Roles = []string{leadsim.RoleWrite}
		s := startAlteringSim(t, leadsim.Options{Clients: []leadsim.Client{client}}, nullCode)
		res, resume, results, _ := upload(t, s)
		if res.code != ExitRowsFailed {
			t.Errorf("exit = %d, want %d (rows unverified)\n%s", res.code, ExitRowsFailed, res.stderr)
		}
		for row, r := range finalByRow(t, results, n) {
			if r["status"] != "unverified" || r["id"] == "" || !strings.Contains(r["note"], "without a result code") {
				t.Errorf("row %d ended %s: id %q note %q; want unverified, its id kept, saying why", row, r["status"], r["id"], r["note"])
			}
		}
		if err := s.GrantRoles(leadsim.DefaultClientID, leadsim.RoleWrite, leadsim.RoleRead); err != nil {
			t.Fatal(err)
		}
		s.On.Store(false)
		res = runUpload(t, s.Server, resume())
		if res.code != ExitOK {
			t.Errorf("--resume exit = %d, want 0\n%s", res.code, res.stderr)
		}
		for row, r := range finalByRow(t, results, n) {
			if r["status"] != "submitted" {
				t.Errorf("row %d ended %s after --resume: note %q; want submitted", row, r["status"], r["note"])
			}
		}
		if got := s.Stats().Submissions; got != n {
			t.Errorf("the service holds %d submissions, want %d", got, n)
		}
	})

	t.Run("qualified without a lead id", func(t *testing.T) {
		s := startAlteringSim(t, leadsim.Options{}, func(_ string, r reply) (reply, time.Duration) {
			return jsonReply(200, string(withField(t, r.Body, "id", "null"))), 0
		})
		res, _, results, summary := upload(t, s)
		if res.code != ExitRowsFailed {
			t.Errorf("exit = %d, want %d (rows unverified)\n%s", res.code, ExitRowsFailed, res.stderr)
		}
		for row, r := range finalByRow(t, results, n) {
			if r["status"] != "unverified" || !strings.Contains(r["note"], "without a lead id") {
				t.Errorf("row %d ended %s: note %q; want unverified, saying the lead has no id", row, r["status"], r["note"])
			}
		}
		if !strings.Contains(res.stderr, "no lead id") || !strings.Contains(res.stderr, "rows 1, 2, 3") {
			t.Errorf("the summary does not name the rows without a lead id:\n%s", res.stderr)
		}
		sum := readSummaryJSON(t, summary)
		if got, _ := sum["noLeadId"].(map[string]any); got == nil || got["count"] != float64(n) {
			t.Errorf("summary JSON noLeadId = %v, want count %d", sum["noLeadId"], n)
		}
	})
}
