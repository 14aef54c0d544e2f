package app

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
)

// What an upload checks of its input before the first call, and what a
// --resume refuses: an edited input matched by row number or by leadId,
// another night's export under the same name, a required column missing,
// too many invalid rows, no rows, a corrupt gzip. Moved from cmd/bulkload's
// input_checks_test.go (argv turned into options; "validate" runs through
// runValidate, standard input through runOpts.stdin).

// sampleRecords reads samples/leads.csv as records, header first.
func sampleRecords(t *testing.T) [][]string {
	t.Helper()
	recs := readCSVFile(t, filepath.Join(samples, "leads.csv"))
	return recs
}

// writeCSV writes records to path (resultstest.WriteCSV).
func writeCSV(t *testing.T, path string, recs [][]string) { resultstest.WriteCSV(t, path, recs) }

// totalCreates is how many createLead calls the simulator answered.
func totalCreates(s *simtest.Server) int {
	n := 0
	for _, c := range s.Stats().CreateCalls {
		n += c
	}
	return n
}

// resumed is an upload of input with --resume.
func resumed(input string) *UploadJob {
	j := newUploadJob(input)
	j.Up.Resume = true
	return j
}

// fromStdin is an upload of standard input (--format csv) to results, the
// options as change leaves them.
func fromStdin(results string, change func(j *UploadJob)) *UploadJob {
	return uploadJob("-", results, func(j *UploadJob) {
		j.In.Format = "csv"
		if change != nil {
			change(j)
		}
	})
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
			s := startSim(t, leadsim.Options{})
			dir := t.TempDir()
			input := filepath.Join(dir, "export.csv")
			results := filepath.Join(dir, "export.results.csv")
			writeCSV(t, input, recs)
			if res := runUpload(t, s, newUploadJob(input)); res.code != ExitOK {
				t.Fatalf("first upload exit = %d\n%s", res.code, res.stderr)
			}
			before, _ := os.ReadFile(results)
			sent := totalCreates(s)

			writeCSV(t, input, tc.recs)
			res := runUpload(t, s, resumed(input))
			if res.code != ExitUsage || !strings.Contains(res.stderr, "does not belong to this input") {
				t.Fatalf("--resume after %s: exit %d, want %d, the results file belongs to another input\n%s", tc.name, res.code, ExitUsage, res.stderr)
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
		s := startSim(t, leadsim.Options{})
		dir := t.TempDir()
		input := filepath.Join(dir, "export.csv")
		writeCSV(t, input, recs[:21])
		if res := runUpload(t, s, newUploadJob(input)); res.code != ExitOK {
			t.Fatalf("first upload exit = %d\n%s", res.code, res.stderr)
		}
		writeCSV(t, input, recs)
		res := runUpload(t, s, resumed(input))
		if res.code != ExitOK {
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
	s := startSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(dir, "export.csv")
	writeCSV(t, input, recs)
	if res := runUpload(t, s, newUploadJob(input)); res.code != ExitOK {
		t.Fatalf("first upload exit = %d\n%s", res.code, res.stderr)
	}

	edited := slices.Clone(recs)
	edited[3] = slices.Clone(recs[3])
	edited[3][slices.Index(recs[0], "city")] = "Springfield"
	writeCSV(t, input, edited)
	if res := runUpload(t, s, resumed(input)); res.code != ExitOK {
		t.Fatalf("--resume of an edited input whose rows all match by leadId: exit %d, want 0\n%s", res.code, res.stderr)
	}

	swapped := slices.Concat(recs[:1], recs[2:3], recs[1:2], recs[3:])
	writeCSV(t, input, swapped)
	res := runUpload(t, s, resumed(input))
	if res.code != ExitUsage || !strings.Contains(res.stderr, "row 1 has leadId") || strings.Contains(res.stderr, "ACCOUNTING MISMATCH") {
		t.Errorf("--resume with rows swapped: exit %d, want %d naming row 1, without the accounting banner\n%s", res.code, ExitUsage, res.stderr)
	}
	if got := totalCreates(s); got != 20 {
		t.Errorf("createLead calls = %d, want the first run's 20 only", got)
	}

	// From standard input, the rows read ahead are matched before the
	// first call: the same error, alone.
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(swapped)
	res = runUpload(t, s, fromStdin(filepath.Join(dir, "export.results.csv"), func(j *UploadJob) { j.Up.Resume = true }), runOpts{stdin: b.Bytes()})
	if res.code != ExitUsage || !strings.Contains(res.stderr, "row 1 has leadId") || strings.Contains(res.stderr, "ACCOUNTING MISMATCH") || strings.Contains(res.stderr, "rows read") {
		t.Errorf("--resume from stdin with rows swapped: exit %d, want %d naming row 1, alone\n%s", res.code, ExitUsage, res.stderr)
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
	s := startSim(t, leadsim.Options{})
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
		if res := runUpload(t, s, uploadJob(input, keyed, func(j *UploadJob) { j.Up.Resume = true })); res.code != ExitOK {
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
	s2 := startSim(t, leadsim.Options{})
	dated := filepath.Join(runs, "{name}-{date}.results.csv")
	day := time.Now().UTC().Format(time.DateOnly)
	res := runUpload(t, s2, uploadJob(input, dated, func(j *UploadJob) {
		j.Up.Resume = true
		j.In.SummaryJSON = filepath.Join(runs, "{name}-{date}.summary.json")
	}))
	if res.code != ExitOK {
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
	s3 := startSim(t, leadsim.Options{})
	writeCSV(t, input, night1)
	if res := runUpload(t, s3, uploadJob(input, plain, nil)); res.code != ExitOK {
		t.Fatalf("night 1: exit %d\n%s", res.code, res.stderr)
	}
	writeCSV(t, input, night2)
	res = runUpload(t, s3, uploadJob(input, plain, nil))
	if res.code != ExitUsage || !strings.Contains(res.stderr, "plain-{date}-{sha}.results.csv") || !strings.Contains(res.stderr, "a new file under that name") {
		t.Errorf("night 2 without --resume: exit %d, want %d with the placeholder hint\n%s", res.code, ExitUsage, res.stderr)
	}
	res = runUpload(t, s3, uploadJob(input, plain, func(j *UploadJob) { j.Up.Resume = true }))
	if res.code != ExitUsage || !strings.Contains(res.stderr, "does not belong to this input") || strings.Contains(res.stderr, "ACCOUNTING MISMATCH") {
		t.Errorf("night 2 with --resume: exit %d, want %d, another input's results, alone\n%s", res.code, ExitUsage, res.stderr)
	}
	if got := totalCreates(s3); got != 20 {
		t.Errorf("createLead calls = %d, want night 1's 20 only", got)
	}
	v := newValidateJob(input)
	v.In.Results = filepath.Join(runs, "{nom}.csv")
	if res := runValidate(t, v); res.code != ExitUsage || !strings.Contains(res.stderr, "unknown placeholder {nom}") {
		t.Errorf("unknown placeholder: exit %d\n%s", res.code, res.stderr)
	}
}

// TestRequiredColumns: a file without a column for dateOfBirth or
// termsConsent (or a --require-columns field) is refused before any call,
// naming what is missing and the unknown columns that might be meant.
func TestRequiredColumns(t *testing.T) {
	t.Parallel()
	recs := sampleRecords(t)[:11]
	cases := []struct {
		name string
		recs [][]string
		// require is --require-columns.
		require string
		want    []string
	}{
		{"termsConsent renamed", renameColumn(recs, "termsConsent", "Agreement Box"), "", []string{"termsConsent", "Agreement Box"}},
		{"dateOfBirth dropped", withoutColumn(recs, "dateOfBirth"), "", []string{"dateOfBirth"}},
		{"SSN renamed TaxNumber, required", renameColumn(recs, "socialSecurityNumber", "TaxNumber"), "socialSecurityNumber", []string{"socialSecurityNumber", "TaxNumber"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startSim(t, leadsim.Options{})
			dir := t.TempDir()
			input := filepath.Join(dir, "export.csv")
			writeCSV(t, input, tc.recs)
			stdin, _ := os.ReadFile(input)
			for _, run := range []struct {
				cmd string
				run func() runResult
			}{
				{"upload", func() runResult {
					j := newUploadJob(input)
					j.Checks.RequireColumns = tc.require
					return runUpload(t, s, j)
				}},
				{"upload", func() runResult {
					return runUpload(t, s, fromStdin(filepath.Join(dir, "stdin.csv"), func(j *UploadJob) { j.Checks.RequireColumns = tc.require }), runOpts{stdin: stdin})
				}},
				{"validate", func() runResult {
					j := newValidateJob(input)
					j.Checks.RequireColumns = tc.require
					return runValidate(t, j)
				}},
			} {
				res := run.run()
				if res.code != ExitUsage {
					t.Errorf("%s: exit %d, want %d\n%s", run.cmd, res.code, ExitUsage, res.stderr)
				}
				for _, w := range tc.want {
					if !strings.Contains(res.stderr, w) {
						t.Errorf("%s: the message does not name %q\n%s", run.cmd, w, res.stderr)
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
	v := newValidateJob(input)
	v.In.SummaryJSON = summary
	res := runValidate(t, v)
	m := readSummaryJSON(t, summary)
	if res.code != ExitOK || !slices.Contains(toStrings(m["unknownColumns"]), "TaxNumber") || !slices.Contains(toStrings(m["missingFields"]), "socialSecurityNumber") {
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
	s := startSim(t, leadsim.Options{})
	dir := t.TempDir()
	for _, j := range []*UploadJob{
		uploadJob(acme, filepath.Join(dir, "a.csv"), nil),
		fromStdin(filepath.Join(dir, "b.csv"), nil),
	} {
		res := runUpload(t, s, j, runOpts{stdin: acmeBytes})
		if res.code != ExitRowsFailed || !strings.Contains(res.stderr, "--max-invalid 20%") || !strings.Contains(res.stderr, "50 of 50 rows") || !strings.Contains(res.stderr, "termsConsent") || !strings.Contains(res.stderr, "nothing was sent") {
			t.Errorf("%s: exit %d, want %d with the limit and the top reasons\n%s", j.Input, res.code, ExitRowsFailed, res.stderr)
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
	if res := runUpload(t, s, uploadJob(input, "", func(j *UploadJob) { j.Checks.MaxInvalid = "1" })); res.code != ExitRowsFailed || totalCreates(s) != 0 {
		t.Errorf("--max-invalid 1 with 2 invalid rows: exit %d, %d sent; want 1, none\n%s", res.code, totalCreates(s), res.stderr)
	}
	// Within --max-invalid, invalid rows are the partner's to fix: the
	// run exits 0 once every valid row is settled; --strict makes them
	// fail it.
	if res := runUpload(t, s, newUploadJob(input)); res.code != ExitOK || totalCreates(s) != 18 {
		t.Errorf("default --max-invalid with 2 of 20 invalid: exit %d, %d sent; want 0, 18\n%s", res.code, totalCreates(s), res.stderr)
	}
	if res := runUpload(t, s, uploadJob(input, "", func(j *UploadJob) {
		j.Checks.Strict = true
		j.Up.Overwrite = true
	})); res.code != ExitRowsFailed {
		t.Errorf("--strict with 2 of 20 invalid: exit %d; want 1\n%s", res.code, res.stderr)
	}
}

// TestNoRows: a header and no rows exits 1 with "no rows", 0 with
// --allow-empty, for validate and upload; the upload makes no call at all,
// neither a token request nor the preflight query (it made the preflight's
// one call before it failed).
func TestNoRows(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(dir, "empty.csv")
	writeCSV(t, input, sampleRecords(t)[:1])
	for _, c := range []struct {
		cmd string
		// run runs the command, with --allow-empty --overwrite when
		// allowEmpty is set.
		run func(allowEmpty bool) runResult
	}{
		{"validate", func(allowEmpty bool) runResult {
			j := newValidateJob(input)
			j.Checks.AllowEmpty, j.Overwrite = allowEmpty, allowEmpty
			return runValidate(t, j)
		}},
		{"upload", func(allowEmpty bool) runResult {
			j := newUploadJob(input)
			j.Checks.AllowEmpty, j.Up.Overwrite = allowEmpty, allowEmpty
			return runUpload(t, s, j)
		}},
	} {
		res := c.run(false)
		if res.code != ExitRowsFailed || !strings.Contains(res.stderr, "no rows") {
			t.Errorf("%s of a header-only file: exit %d, want %d, \"no rows\"\n%s", c.cmd, res.code, ExitRowsFailed, res.stderr)
		}
		res = c.run(true)
		if res.code != ExitOK {
			t.Errorf("%s --allow-empty: exit %d, want 0\n%s", c.cmd, res.code, res.stderr)
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
	s := startSim(t, leadsim.Options{})
	for _, j := range []*UploadJob{
		newUploadJob(input),
		fromStdin(filepath.Join(dir, "stdin.csv"), nil),
	} {
		res := runUpload(t, s, j, runOpts{stdin: z})
		if res.code != ExitUsage || !strings.Contains(res.stderr, "checksum") || !strings.Contains(res.stderr, "nothing was sent") {
			t.Errorf("%s: exit %d, want %d naming the checksum\n%s", j.Input, res.code, ExitUsage, res.stderr)
		}
	}
	if n := totalCreates(s); n != 0 {
		t.Errorf("%d leads sent from a corrupt gzip file", n)
	}
	// One exit status for one kind of failure: validate refuses the same
	// corrupt file as upload does, exit 2.
	file := newValidateJob(input)
	file.In.Results = filepath.Join(dir, "v.csv")
	stdin := newValidateJob("-")
	stdin.In.Format = "csv"
	stdin.In.Results = filepath.Join(dir, "v-stdin.csv")
	for _, j := range []*ValidateJob{file, stdin} {
		if res := runValidate(t, j, runOpts{stdin: z}); res.code != ExitUsage || !strings.Contains(res.stderr, "checksum") {
			t.Errorf("validate %s: exit %d, want %d naming the checksum, as upload\n%s", j.Input, res.code, ExitUsage, res.stderr)
		}
	}
}
