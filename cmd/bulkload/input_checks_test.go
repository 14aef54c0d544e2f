package main

import (
	"bytes"
	"compress/gzip"
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
	"github.com/bulkload/bulkload/leadsim"
)

// sampleRecords reads samples/leads.csv as records, header first.
func sampleRecords(t *testing.T) [][]string {
	t.Helper()
	recs := readCSVFile(t, filepath.Join(samples, "leads.csv"))
	return recs
}

// writeCSV writes records to path.
func writeCSV(t *testing.T, path string, recs [][]string) {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// withoutColumn drops the named column of every record.
func withoutColumn(recs [][]string, name string) [][]string {
	i := slices.Index(recs[0], name)
	out := make([][]string, len(recs))
	for r, rec := range recs {
		out[r] = slices.Delete(slices.Clone(rec), i, i+1)
	}
	return out
}

// renameColumn renames one header.
func renameColumn(recs [][]string, from, to string) [][]string {
	out := slices.Clone(recs)
	out[0] = slices.Clone(recs[0])
	out[0][slices.Index(recs[0], from)] = to
	return out
}

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

// TestResumeRefusesAnEditedInputWithoutLeadIDs: for a file without a leadId
// column, rows can only be matched by number, so an inserted or deleted row
// makes the results file another input's: --resume refuses before any
// call, with that error alone. Rows appended to the same file are fine.
func TestResumeRefusesAnEditedInputWithoutLeadIDs(t *testing.T) {
	t.Parallel()
	recs := withoutColumn(sampleRecords(t), "leadId")[:31] // header + 30 rows
	edits := []struct {
		name string
		recs [][]string
	}{
		{"row inserted at the top", slices.Concat(recs[:1], [][]string{recs[30]}, recs[1:30])},
		{"last row deleted", recs[:30]},
		{"a row changed", slices.Concat(recs[:5], [][]string{recs[6]}, recs[6:])},
	}
	for _, tc := range edits {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a simulator and a folder of its own
			s := startTestSim(t, leadsim.Options{})
			dir := t.TempDir()
			input := filepath.Join(dir, "export.csv")
			results := filepath.Join(dir, "export.results.csv")
			writeCSV(t, input, recs)
			if res := runCLI(t, secretEnv(), checkUploadArgs(s, input)...); res.code != app.ExitOK {
				t.Fatalf("first upload exit = %d\n%s", res.code, res.stderr)
			}
			before, _ := os.ReadFile(results)
			sent := totalCreates(s)

			writeCSV(t, input, tc.recs)
			res := runCLI(t, secretEnv(), checkUploadArgs(s, "--resume", input)...)
			if res.code != app.ExitUsage || !strings.Contains(res.stderr, "does not belong to this input") {
				t.Fatalf("--resume after %s: exit %d, want %d, the results file belongs to another input\n%s", tc.name, res.code, app.ExitUsage, res.stderr)
			}
			if strings.Contains(res.stderr, "ACCOUNTING MISMATCH") || strings.Contains(res.stderr, "rows read") {
				t.Errorf("the foreign-journal error is not alone: a summary was printed\n%s", res.stderr)
			}
			if got := totalCreates(s); got != sent {
				t.Errorf("the refused resume sent %d leads", got-sent)
			}
			if after, _ := os.ReadFile(results); !bytes.Equal(before, after) {
				t.Errorf("the refused resume changed the results file")
			}
		})
	}

	t.Run("rows appended", func(t *testing.T) {
		t.Parallel() // a simulator and a folder of its own
		s := startTestSim(t, leadsim.Options{})
		dir := t.TempDir()
		input := filepath.Join(dir, "export.csv")
		writeCSV(t, input, recs[:21])
		if res := runCLI(t, secretEnv(), checkUploadArgs(s, input)...); res.code != app.ExitOK {
			t.Fatalf("first upload exit = %d\n%s", res.code, res.stderr)
		}
		writeCSV(t, input, recs)
		res := runCLI(t, secretEnv(), checkUploadArgs(s, "--resume", input)...)
		if res.code != app.ExitOK {
			t.Fatalf("--resume after rows were appended: exit %d, want 0\n%s", res.code, res.stderr)
		}
		if got := totalCreates(s); got != 30 {
			t.Errorf("createLead calls = %d, want 30: each row once, the 10 appended ones by the resume", got)
		}
		finalByRow(t, filepath.Join(dir, "export.results.csv"), 30)
	})
}

// TestResumeMatchesAnEditedInputByLeadID: with a leadId on every row, an
// edited input (a corrected phone number) resumes; rows swapped are refused
// before any call, naming the row, without the accounting banner.
func TestResumeMatchesAnEditedInputByLeadID(t *testing.T) {
	t.Parallel()
	recs := sampleRecords(t)[:21]
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(dir, "export.csv")
	writeCSV(t, input, recs)
	if res := runCLI(t, secretEnv(), checkUploadArgs(s, input)...); res.code != app.ExitOK {
		t.Fatalf("first upload exit = %d\n%s", res.code, res.stderr)
	}

	edited := slices.Clone(recs)
	edited[3] = slices.Clone(recs[3])
	edited[3][slices.Index(recs[0], "city")] = "Springfield"
	writeCSV(t, input, edited)
	if res := runCLI(t, secretEnv(), checkUploadArgs(s, "--resume", input)...); res.code != app.ExitOK {
		t.Fatalf("--resume of an edited input whose rows all match by leadId: exit %d, want 0\n%s", res.code, res.stderr)
	}

	swapped := slices.Concat(recs[:1], recs[2:3], recs[1:2], recs[3:])
	writeCSV(t, input, swapped)
	res := runCLI(t, secretEnv(), checkUploadArgs(s, "--resume", input)...)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, "row 1 has leadId") || strings.Contains(res.stderr, "ACCOUNTING MISMATCH") {
		t.Errorf("--resume with rows swapped: exit %d, want %d naming row 1, without the accounting banner\n%s", res.code, app.ExitUsage, res.stderr)
	}
	if got := totalCreates(s); got != 20 {
		t.Errorf("createLead calls = %d, want the first run's 20 only", got)
	}

	// From standard input, the rows read ahead are matched before the
	// first call: the same error, alone.
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(swapped)
	res = runStdin(t, b.Bytes(), slices.Concat([]string{"upload", "--format", "csv", "--resume", "--results", filepath.Join(dir, "export.results.csv")}, s.args(), []string{"--rate", "0", "--progress", "off", "-"})...)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, "row 1 has leadId") || strings.Contains(res.stderr, "ACCOUNTING MISMATCH") || strings.Contains(res.stderr, "rows read") {
		t.Errorf("--resume from stdin with rows swapped: exit %d, want %d naming row 1, alone\n%s", res.code, app.ExitUsage, res.stderr)
	}
	if got := totalCreates(s); got != 20 {
		t.Errorf("createLead calls = %d, want the first run's 20 only", got)
	}
}

// TestNightlyFixedExportName is the nightly job on export.csv: night 2
// brings a different file under the same name. With {name}-{date} (or
// {sha}) in --results, each night has its own results file and works;
// without, the message says what to do, and --resume refuses the other
// Input before anything is sent.
func TestNightlyFixedExportName(t *testing.T) {
	t.Parallel()
	recs := sampleRecords(t)
	night1, night2 := recs[:21], slices.Concat(recs[:1], recs[21:41])
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(dir, "export.csv")
	runs := filepath.Join(dir, "runs")
	if err := os.Mkdir(runs, 0o700); err != nil {
		t.Fatal(err)
	}

	// Keyed by content: night 1 and a rerun of it resume one file, night 2
	// gets a new one.
	keyed := filepath.Join(runs, "{name}-{sha}.results.csv")
	for i, recs := range [][][]string{night1, night1, night2} {
		writeCSV(t, input, recs)
		if res := runCLI(t, secretEnv(), checkUploadArgs(s, "--resume", "--results", keyed, input)...); res.code != app.ExitOK {
			t.Fatalf("run %d with --results %s --resume: exit %d, want 0\n%s", i+1, keyed, res.code, res.stderr)
		}
	}
	for id, n := range s.Stats().CreateCalls {
		if n != 1 {
			t.Errorf("leadId %s created %d times", id, n)
		}
	}
	for _, recs := range [][][]string{night1, night2} {
		writeCSV(t, input, recs)
		b, _ := os.ReadFile(input)
		sum := sha256.Sum256(b)
		finalByRow(t, filepath.Join(runs, "export-"+hex.EncodeToString(sum[:])[:12]+".results.csv"), 20)
	}

	// Dated (the README's line adds {sha}: TestCronLineOneNight).
	s2 := startTestSim(t, leadsim.Options{})
	dated := filepath.Join(runs, "{name}-{date}.results.csv")
	day := time.Now().UTC().Format(time.DateOnly)
	res := runCLI(t, secretEnv(), checkUploadArgs(s2, "--resume", "--results", dated, "--summary-json", filepath.Join(runs, "{name}-{date}.summary.json"), input)...)
	if res.code != app.ExitOK {
		t.Fatalf("dated run: exit %d\n%s", res.code, res.stderr)
	}
	// The run took its date at its start: the day before the run, or the
	// day after it when the run crossed midnight.
	if _, err := os.Stat(filepath.Join(runs, "export-"+day+".results.csv")); err != nil {
		day = time.Now().UTC().Format(time.DateOnly)
	}
	finalByRow(t, filepath.Join(runs, "export-"+day+".results.csv"), 20)
	readSummaryJSON(t, filepath.Join(runs, "export-"+day+".summary.json"))

	// Without placeholders: night 1, then night 2 under the same name.
	plain := filepath.Join(dir, "plain.results.csv")
	s3 := startTestSim(t, leadsim.Options{})
	writeCSV(t, input, night1)
	if res := runCLI(t, secretEnv(), checkUploadArgs(s3, "--results", plain, input)...); res.code != app.ExitOK {
		t.Fatalf("night 1: exit %d\n%s", res.code, res.stderr)
	}
	writeCSV(t, input, night2)
	res = runCLI(t, secretEnv(), checkUploadArgs(s3, "--results", plain, input)...)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, "plain-{date}-{sha}.results.csv") || !strings.Contains(res.stderr, "a new file under that name") {
		t.Errorf("night 2 without --resume: exit %d, want %d with the placeholder hint\n%s", res.code, app.ExitUsage, res.stderr)
	}
	res = runCLI(t, secretEnv(), checkUploadArgs(s3, "--resume", "--results", plain, input)...)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, "does not belong to this input") || strings.Contains(res.stderr, "ACCOUNTING MISMATCH") {
		t.Errorf("night 2 with --resume: exit %d, want %d, another input's results, alone\n%s", res.code, app.ExitUsage, res.stderr)
	}
	if got := totalCreates(s3); got != 20 {
		t.Errorf("createLead calls = %d, want night 1's 20 only", got)
	}
	if res := runCLI(t, nil, "validate", "--results", filepath.Join(runs, "{nom}.csv"), input); res.code != app.ExitUsage || !strings.Contains(res.stderr, "unknown placeholder {nom}") {
		t.Errorf("unknown placeholder: exit %d\n%s", res.code, res.stderr)
	}
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

// TestRequiredColumns: a file without a column for dateOfBirth or
// termsConsent (or a --require-columns field) is refused before any call,
// naming what is missing and the unknown columns that might be meant.
func TestRequiredColumns(t *testing.T) {
	t.Parallel()
	recs := sampleRecords(t)[:11]
	cases := []struct {
		name  string
		recs  [][]string
		flags []string
		want  []string
	}{
		{"termsConsent renamed", renameColumn(recs, "termsConsent", "Agreement Box"), nil, []string{"termsConsent", "Agreement Box"}},
		{"dateOfBirth dropped", withoutColumn(recs, "dateOfBirth"), nil, []string{"dateOfBirth"}},
		{"SSN renamed TaxNumber, required", renameColumn(recs, "socialSecurityNumber", "TaxNumber"), []string{"--require-columns", "socialSecurityNumber"}, []string{"socialSecurityNumber", "TaxNumber"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startTestSim(t, leadsim.Options{})
			dir := t.TempDir()
			input := filepath.Join(dir, "export.csv")
			writeCSV(t, input, tc.recs)
			for _, args := range [][]string{
				checkUploadArgs(s, slices.Concat(tc.flags, []string{input})...),
				slices.Concat([]string{"upload", "--format", "csv"}, s.args(), tc.flags, []string{"--rate", "0", "--progress", "off", "--results", filepath.Join(dir, "stdin.csv"), "-"}),
				slices.Concat([]string{"validate"}, tc.flags, []string{input}),
			} {
				var stdin []byte
				if args[len(args)-1] == "-" {
					stdin, _ = os.ReadFile(input)
				}
				res := runStdin(t, stdin, args...)
				if res.code != app.ExitUsage {
					t.Errorf("%s: exit %d, want %d\n%s", args[0], res.code, app.ExitUsage, res.stderr)
				}
				for _, w := range tc.want {
					if !strings.Contains(res.stderr, w) {
						t.Errorf("%s: the message does not name %q\n%s", args[0], w, res.stderr)
					}
				}
			}
			if n := totalCreates(s); n != 0 {
				t.Errorf("%d leads sent", n)
			}
		})
	}
	// Without --require-columns the renamed SSN column only shows in the
	// summary: unknown TaxNumber, missing socialSecurityNumber.
	dir := t.TempDir()
	input := filepath.Join(dir, "export.csv")
	writeCSV(t, input, renameColumn(recs, "socialSecurityNumber", "TaxNumber"))
	summary := filepath.Join(dir, "s.json")
	res := runCLI(t, nil, "validate", "--summary-json", summary, input)
	m := readSummaryJSON(t, summary)
	if res.code != app.ExitOK || !slices.Contains(toStrings(m["unknownColumns"]), "TaxNumber") || !slices.Contains(toStrings(m["missingFields"]), "socialSecurityNumber") {
		t.Errorf("validate: exit %d, unknownColumns %v, missingFields %v; want 0, TaxNumber, socialSecurityNumber\n%s", res.code, m["unknownColumns"], m["missingFields"], res.stderr)
	}
}

func toStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
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

// TestMaxInvalid: an export whose consent column says "I agree" (a partner
// file without its mapping) has every row invalid; upload sends nothing,
// prints the top reasons and exits 1, for a file and for standard input. A
// few bad rows under the limit go through.
func TestMaxInvalid(t *testing.T) {
	t.Parallel()
	recs := sampleRecords(t)
	agree := slices.Clone(recs)
	consent := slices.Index(recs[0], "termsConsent")
	for r := 1; r < len(agree); r++ {
		agree[r] = slices.Clone(recs[r])
		agree[r][consent] = "I agree"
	}
	acme := filepath.Join(t.TempDir(), "acme.csv")
	writeCSV(t, acme, agree)
	acmeBytes, err := os.ReadFile(acme)
	if err != nil {
		t.Fatal(err)
	}
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	for _, args := range [][]string{
		checkUploadArgs(s, "--results", filepath.Join(dir, "a.csv"), acme),
		slices.Concat([]string{"upload", "--format", "csv"}, s.args(), []string{"--rate", "0", "--progress", "off", "--results", filepath.Join(dir, "b.csv"), "-"}),
	} {
		res := runStdin(t, acmeBytes, args...)
		if res.code != app.ExitRowsFailed || !strings.Contains(res.stderr, "--max-invalid 20%") || !strings.Contains(res.stderr, "50 of 50 rows") || !strings.Contains(res.stderr, "termsConsent") || !strings.Contains(res.stderr, "nothing was sent") {
			t.Errorf("%s: exit %d, want %d with the limit and the top reasons\n%s", args[len(args)-1], res.code, app.ExitRowsFailed, res.stderr)
		}
	}
	if n := totalCreates(s); n != 0 {
		t.Errorf("%d leads sent from a file over --max-invalid", n)
	}

	// 2 bad rows of 20 (10%) pass the default and fail --max-invalid 1.
	recs = recs[:21]
	bad := slices.Clone(recs)
	zip := slices.Index(recs[0], "zipCode")
	for _, r := range []int{4, 9} {
		bad[r] = slices.Clone(recs[r])
		bad[r][zip] = "123"
	}
	input := filepath.Join(dir, "export.csv")
	writeCSV(t, input, bad)
	if res := runCLI(t, secretEnv(), checkUploadArgs(s, "--max-invalid", "1", input)...); res.code != app.ExitRowsFailed || totalCreates(s) != 0 {
		t.Errorf("--max-invalid 1 with 2 invalid rows: exit %d, %d sent; want 1, none\n%s", res.code, totalCreates(s), res.stderr)
	}
	// Within --max-invalid, invalid rows are the partner's to fix: the
	// run exits 0 once every valid row is settled; --strict makes them
	// fail it.
	if res := runCLI(t, secretEnv(), checkUploadArgs(s, input)...); res.code != app.ExitOK || totalCreates(s) != 18 {
		t.Errorf("default --max-invalid with 2 of 20 invalid: exit %d, %d sent; want 0, 18\n%s", res.code, totalCreates(s), res.stderr)
	}
	if res := runCLI(t, secretEnv(), checkUploadArgs(s, "--strict", "--overwrite", input)...); res.code != app.ExitRowsFailed {
		t.Errorf("--strict with 2 of 20 invalid: exit %d; want 1\n%s", res.code, res.stderr)
	}
}

// TestNoRows: a header and no rows exits 1 with "no rows", 0 with
// --allow-empty, for validate and upload; the upload makes no call at all,
// neither a token request nor the preflight query (it made the preflight's
// one call before it failed).
func TestNoRows(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(dir, "empty.csv")
	writeCSV(t, input, sampleRecords(t)[:1])
	for _, args := range [][]string{
		{"validate", input},
		checkUploadArgs(s, input),
	} {
		res := runCLI(t, secretEnv(), args...)
		if res.code != app.ExitRowsFailed || !strings.Contains(res.stderr, "no rows") {
			t.Errorf("%s of a header-only file: exit %d, want %d, \"no rows\"\n%s", args[0], res.code, app.ExitRowsFailed, res.stderr)
		}
		res = runCLI(t, secretEnv(), slices.Concat(args[:1], []string{"--allow-empty", "--overwrite"}, args[1:])...)
		if res.code != app.ExitOK {
			t.Errorf("%s --allow-empty: exit %d, want 0\n%s", args[0], res.code, res.stderr)
		}
	}
	if st := s.Stats(); len(st.Requests) != 0 || st.TokensIssued != 0 {
		t.Errorf("uploads of a header-only file made calls: %v, %d tokens; want none", st.Requests, st.TokensIssued)
	}
}

// gzipped compresses b.
func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// TestCorruptGzipSendsNothing: a .gz whose checksum is wrong (every row
// decodes; only the trailer betrays it) is refused before the first call,
// from a file and from standard input.
func TestCorruptGzipSendsNothing(t *testing.T) {
	t.Parallel()
	plain, err := os.ReadFile(filepath.Join(samples, "leads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	z := gzipped(t, plain)
	z[len(z)-8] ^= 0x01 // the CRC-32 of the trailer
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv.gz")
	if err := os.WriteFile(input, z, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startTestSim(t, leadsim.Options{})
	for _, args := range [][]string{
		checkUploadArgs(s, input),
		slices.Concat([]string{"upload", "--format", "csv"}, s.args(), []string{"--rate", "0", "--progress", "off", "--results", filepath.Join(dir, "stdin.csv"), "-"}),
	} {
		res := runStdin(t, z, args...)
		if res.code != app.ExitUsage || !strings.Contains(res.stderr, "checksum") || !strings.Contains(res.stderr, "nothing was sent") {
			t.Errorf("%s: exit %d, want %d naming the checksum\n%s", args[len(args)-1], res.code, app.ExitUsage, res.stderr)
		}
	}
	if n := totalCreates(s); n != 0 {
		t.Errorf("%d leads sent from a corrupt gzip file", n)
	}
	// One exit status for one kind of failure: validate refuses the same
	// corrupt file as upload does, exit 2.
	for _, args := range [][]string{
		{"validate", "--results", filepath.Join(dir, "v.csv"), input},
		{"validate", "--format", "csv", "--results", filepath.Join(dir, "v-stdin.csv"), "-"},
	} {
		if res := runStdin(t, z, args...); res.code != app.ExitUsage || !strings.Contains(res.stderr, "checksum") {
			t.Errorf("validate %s: exit %d, want %d naming the checksum, as upload\n%s", args[len(args)-1], res.code, app.ExitUsage, res.stderr)
		}
	}
}
