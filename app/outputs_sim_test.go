package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/leadsim"
)

// Every output is checked before the first call, and none replaces an
// upload's outcomes. Moved from cmd/bulkload's outputs_test.go (argv
// turned into options: a case's output flags became the InputOptions it
// sets, given to the upload and to the validate alike; a results path
// the case does not set is the test's own, as before);
// TestSecondRunOnResultsFileRefused (a subprocess holds the lock) stays.

// copySample copies a sample file into dir and returns its path.
func copySample(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samples, name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// finalByRowStatus reads a validate results file: one line per row, in
// order, each with the given status.
func finalByRowStatus(t *testing.T, path string, n int, status string) map[int]resultRow {
	t.Helper()
	rows := readResults(t, path)
	if len(rows) != n {
		t.Fatalf("results has %d rows, want %d", len(rows), n)
	}
	out := map[int]resultRow{}
	for i, r := range rows {
		if r["status"] != status {
			t.Errorf("row %s status = %q, want %q (error %q)", r["row"], r["status"], status, r["error"])
		}
		out[i+1] = r
	}
	return out
}

// TestValidateNeverReplacesUploadOutcomes is the repro: validate
// after upload, both with their default outputs, leaves the upload's
// journal alone; validate --results on it is refused without --overwrite,
// and so is any other output pointed at it.
func TestValidateNeverReplacesUploadOutcomes(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := copySample(t, dir, "leads.csv")
	results := filepath.Join(dir, "leads.results.csv")
	if res := runUpload(t, s, newUploadJob(input)); res.code != ExitOK {
		t.Fatalf("upload exit = %d\n%s", res.code, res.stderr)
	}
	journal, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	unchanged := func(what string) {
		t.Helper()
		if b, _ := os.ReadFile(results); !bytes.Equal(b, journal) {
			t.Fatalf("%s changed the upload's results file", what)
		}
	}

	if res := runValidate(t, newValidateJob(input)); res.code != ExitOK {
		t.Fatalf("validate exit = %d\n%s", res.code, res.stderr)
	}
	unchanged("validate with its default output")
	finalByRowStatus(t, filepath.Join(dir, "leads.validation.csv"), 50, "valid")

	validate := func(change func(in *InputOptions)) func() runResult {
		return func() runResult {
			j := newValidateJob(input)
			change(j.In)
			return runValidate(t, j)
		}
	}
	for _, c := range []struct {
		name string // the command line it was
		run  func() runResult
	}{
		{"validate --results " + results, validate(func(in *InputOptions) { in.Results = results })},
		{"validate --rejects " + results, validate(func(in *InputOptions) { in.Rejects = results })},
		{"validate --summary-json " + results, validate(func(in *InputOptions) { in.SummaryJSON = results })},
		{"upload --summary-json " + results + " --results other.csv", func() runResult {
			return runUpload(t, s, uploadJob(input, filepath.Join(dir, "other.csv"), func(j *UploadJob) { j.In.SummaryJSON = results }))
		}},
	} {
		res := c.run()
		if res.code != ExitUsage || !strings.Contains(res.stderr, "holds the outcomes of an upload") || !strings.Contains(res.stderr, "--overwrite") {
			t.Errorf("%q: exit %d, want %d saying it holds an upload's outcomes\n%s", c.name, res.code, ExitUsage, res.stderr)
		}
		unchanged(c.name)
	}
	if got := s.Stats().LeadsCreated; got != 50 {
		t.Errorf("leads created = %d, want the first upload's 50 only", got)
	}

	v := newValidateJob(input)
	v.Overwrite = true
	v.In.Results = results
	res := runValidate(t, v)
	if res.code != ExitOK {
		t.Fatalf("validate --overwrite exit = %d\n%s", res.code, res.stderr)
	}
	finalByRowStatus(t, results, 50, "valid")
}

// TestOutputsCheckedBeforeFirstCall: an output that cannot be written
// stops the run before any lead is sent, with exit 2 naming the flag.
func TestOutputsCheckedBeforeFirstCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := filepath.Join(samples, "leads.csv")
	notADir := filepath.Join(dir, "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		// set sets the outputs the case's flags set.
		set  func(in *InputOptions)
		want string
	}{
		{"summary-json in a missing directory", func(in *InputOptions) { in.SummaryJSON = filepath.Join(dir, "nodir", "s.json") }, "--summary-json"},
		{"rejects in a missing directory", func(in *InputOptions) { in.Rejects = filepath.Join(dir, "nodir", "r.csv") }, "--rejects"},
		{"results under a file", func(in *InputOptions) { in.Results = filepath.Join(notADir, "r.csv") }, "--results"},
		{"summary-json is a directory", func(in *InputOptions) { in.SummaryJSON = dir }, "--summary-json"},
		{"two outputs on one file", func(in *InputOptions) {
			in.Rejects = filepath.Join(dir, "same.csv")
			in.SummaryJSON = filepath.Join(dir, "same.csv")
		}, "both name"},
		{"results over the input", func(in *InputOptions) { in.Results = input }, "is the input file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startSim(t, leadsim.Options{})
			j := newUploadJob(input)
			tc.set(j.In)
			if j.In.Results == "" {
				j.In.Results = filepath.Join(t.TempDir(), "results.csv")
			}
			res := runUpload(t, s, j)
			if res.code != ExitUsage || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, want %d naming %s\n%s", res.code, ExitUsage, tc.want, res.stderr)
			}
			if n := len(s.Stats().CreateCalls); n != 0 {
				t.Errorf("%d leads sent before the output was found unwritable", n)
			}
			// validate checks the same outputs, the same way.
			v := newValidateJob(input)
			tc.set(v.In)
			if v.In.Results == "" {
				v.In.Results = filepath.Join(t.TempDir(), "v.csv")
			}
			if res := runValidate(t, v); res.code != ExitUsage || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("validate: exit %d, want %d naming %s\n%s", res.code, ExitUsage, tc.want, res.stderr)
			}
		})
	}
}
