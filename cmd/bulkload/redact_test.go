package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/summary"
)

// echoForms returns every SSN and date of birth of a sample CSV written
// the ways a service may echo them: the SSN with dashes, spaces, dots and
// none; the date month first and day first, 2- and 4-digit years, without
// separators and with the month's name.
func echoForms(t *testing.T, path string) []string {
	t.Helper()
	recs := readCSVFile(t, path)
	months := []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	var out []string
	for i, h := range recs[0] {
		for _, rec := range recs[1:] {
			v := strings.TrimSpace(rec[i])
			switch {
			case v == "":
			case h == "socialSecurityNumber":
				d := strings.ReplaceAll(v, "-", "")
				out = append(out, d, d[:3]+"-"+d[3:5]+"-"+d[5:], d[:3]+" "+d[3:5]+" "+d[5:], d[:3]+"."+d[3:5]+"."+d[5:])
			case h == "dateOfBirth":
				y, _ := strconv.Atoi(v[:4])
				m, _ := strconv.Atoi(v[5:7])
				d, _ := strconv.Atoi(v[8:10])
				out = append(out, v,
					fmt.Sprintf("%02d/%02d/%04d", m, d, y), fmt.Sprintf("%d/%d/%02d", m, d, y%100),
					fmt.Sprintf("%02d.%02d.%04d", d, m, y), fmt.Sprintf("%04d%02d%02d", y, m, d),
					fmt.Sprintf("%s %d, %04d", months[m-1], d, y), fmt.Sprintf("%02d-%s-%02d", d, strings.ToUpper(months[m-1][:3]), y%100))
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no SSN or dateOfBirth values to look for", path)
	}
	return out
}

// TestUploadRedactsEchoedPersonalData runs an upload against a simulator
// that echoes each lead's SSN and date of birth, written several ways, in
// every note, bidValue, error message and extensions.code (createLead,
// submitLead, the lead read after a lost answer, injected 500s), and scans
// every output (debug log, results file, summary JSON) for them.
func TestUploadRedactsEchoedPersonalData(t *testing.T) {
	t.Parallel()
	auto := leadsim.DefaultClient()
	auto.AutoSubmit = true // every submitLead is refused: already submitted
	s := startTestSim(t, leadsim.Options{EchoPII: true, Clients: []leadsim.Client{auto}, Fail500: 0.1, DropAfter: 0.15, Seed: 9})
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	summaryJSON := filepath.Join(dir, "summary.json")
	htmlReport := filepath.Join(dir, "run.html")
	input := filepath.Join(samples, "leads.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--summary-json", summaryJSON, "--report", htmlReport, "--rejects", filepath.Join(dir, "rejects.csv"),
		"--already-submitted", "", "--log-level", "debug", "--log-format", "json", "--rate", "0", "--progress", "off",
		"--concurrency", "4", "--max-attempts", "3", input)
	res := runCLI(t, secretEnv(), args...)
	if res.code != app.ExitRowsFailed {
		t.Fatalf("upload exit = %d, want %d (submitLead refusals fail rows)\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}

	// The simulator did provoke every path this test is about.
	st := s.Stats()
	if st.Rejections[leadsim.RejectFault500] == 0 || st.Rejections[leadsim.RejectDropped] == 0 ||
		st.Rejections[leadsim.RejectSubmitRefused] == 0 || len(st.Requests[leadsim.OpLead]) == 0 {
		t.Fatalf("simulator rejections %v, lead reads %v: want 500s, dropped answers, refused submissions and lead reads", st.Rejections, st.Requests[leadsim.OpLead])
	}
	rows := readResults(t, results)
	seen := map[string]bool{}
	for _, r := range rows {
		switch {
		case r["status"] == "failed" && strings.Contains(r["error"], "HTTP 500") && strings.Contains(r["error"], "[REDACTED]"):
			seen["createLead 500"] = true
		case r["status"] == "submit_failed" && strings.Contains(r["error"], "already submitted [") && strings.Contains(r["error"], "[REDACTED]"):
			seen["submitLead error"] = true
		}
		if strings.Contains(r["note"], "answered as a duplicate on the retry") && strings.Contains(r["note"], "[REDACTED]") {
			seen["lead read note"] = true
		}
		if strings.Contains(r["bidValue"], "[REDACTED]") {
			seen["bidValue"] = true
		}
	}
	for _, what := range []string{"createLead 500", "submitLead error", "lead read note", "bidValue"} {
		if !seen[what] {
			t.Errorf("no row shows a redacted %s: the test does not test it", what)
		}
	}

	forms := echoForms(t, input)
	b, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(summaryJSON)
	if err != nil {
		t.Fatal(err)
	}
	// The run report, as --report wrote it and as bulkload report draws it
	// from the files (the summary beside the results file among them).
	page, err := os.ReadFile(htmlReport)
	if err != nil {
		t.Fatal(err)
	}
	later := filepath.Join(dir, "later.html")
	if r := runCLI(t, nil, "report", "-o", later, results); r.code != app.ExitOK {
		t.Fatalf("bulkload report exit = %d\n%s", r.code, r.stderr)
	}
	pageLater, err := os.ReadFile(later)
	if err != nil {
		t.Fatal(err)
	}
	sidecar, err := os.ReadFile(summary.Path(results))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"stderr (debug log)": res.stderr, "stdout": res.stdout, "results file": string(b), "summary JSON": string(sum),
		"--report": string(page), "bulkload report": string(pageLater), "summary beside the results": string(sidecar)} {
		for _, f := range forms {
			if strings.Contains(text, f) {
				i := strings.Index(text, f)
				t.Errorf("%s holds an SSN or date of birth (%q) near: %q", what, f, text[max(0, i-80):min(len(text), i+len(f)+40)])
				break
			}
		}
	}
}

// TestAuthCheckScrubsEchoedSecret points auth check at a token endpoint
// whose error_description quotes the form body it got and the credentials
// as an HTTP Basic header would carry them: none of the secret's encodings
// may reach the output.
func TestAuthCheckScrubsEchoedSecret(t *testing.T) {
	t.Parallel()
	const id, secret = "client-9", "p@ss w0rd+/=XyZ"
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		basic := base64.StdEncoding.EncodeToString([]byte(form.Get("client_id") + ":" + form.Get("client_secret")))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request",
			"error_description": "AADSTS900144: bad body " + string(body) + " (Authorization: Basic " + basic + ")"})
	}))
	defer ts.Close()
	res := runCLI(t, map[string]string{"BULKLOAD_CLIENT_SECRET": secret}, "auth", "check",
		"--token-url", ts.URL+"/token", "--client-id", id, "--scope", "api://x/.default", "--log-level", "debug")
	out := res.stdout + res.stderr
	if res.code != app.ExitAuth || !strings.Contains(out, "client_secret=[REDACTED]") {
		t.Fatalf("auth check exit = %d, want %d with the echoed form scrubbed:\n%s", res.code, app.ExitAuth, out)
	}
	for what, leak := range map[string]string{
		"raw": secret, "form-encoded": url.QueryEscape(secret), "path-escaped": url.PathEscape(secret),
		"basic": base64.StdEncoding.EncodeToString([]byte(id + ":" + secret)), "fragment": "w0rd",
	} {
		if strings.Contains(out, leak) {
			t.Errorf("auth check output holds the secret %s (%q):\n%s", what, leak, out)
		}
	}
}
