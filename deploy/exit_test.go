package deploy

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
)

// failingExitCodes returns, per Job or CronJob, the exit statuses its
// podFailurePolicy fails the Job (or index) on at once.
func failingExitCodes(t *testing.T) map[string][]int32 {
	t.Helper()
	out := map[string][]int32{}
	for _, o := range loadManifests(t) {
		var p *batchv1.PodFailurePolicy
		switch v := o.obj.(type) {
		case *batchv1.CronJob:
			p = v.Spec.JobTemplate.Spec.PodFailurePolicy
		case *batchv1.Job:
			p = v.Spec.PodFailurePolicy
		}
		if p == nil {
			continue
		}
		for _, r := range p.Rules {
			if r.OnExitCodes == nil || (r.Action != batchv1.PodFailurePolicyActionFailJob && r.Action != batchv1.PodFailurePolicyActionFailIndex) {
				continue
			}
			if r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn {
				out[o.file+" "+o.name] = append(out[o.file+" "+o.name], r.OnExitCodes.Values...)
			}
		}
	}
	return out
}

// TestInvalidRowsDoNotFailTheJob: a partner file with a few invalid rows
// (ordinary partner data) is a successful run, not a failed Job: bulkload
// exits 0 (the rows are reported: summary, metrics, rejects file), a
// status no podFailurePolicy fails on, and no Job passes --strict, which
// would make them exit 1. Exit 1 (failed or unverified rows, or more
// invalid rows than --max-invalid: nothing sent) still fails the Job at
// once: a retry sends the same rows to the same answer.
func TestInvalidRowsDoNotFailTheJob(t *testing.T) {
	dir := t.TempDir()
	bin := buildBulkload(t)
	f, err := os.Open("../samples/leads.csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	zip := slices.Index(recs[0], "zipCode")
	for _, r := range []int{2, 5} { // 2 of 50 rows invalid
		recs[r][zip] = "123"
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.WriteAll(recs)
	input := filepath.Join(dir, "leads.csv")
	if err := os.WriteFile(input, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(bin, "upload", "--simulate", "--progress", "off", "--rate", "0", "--results", filepath.Join(dir, "r.results.csv"), input)
	out, err := run.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Errorf("upload of a file with 2 invalid rows of 50: exit %d, want 0\n%s", code, out)
	}
	for job, codes := range failingExitCodes(t) {
		if slices.Contains(codes, int32(code)) {
			t.Errorf("%s: podFailurePolicy fails the Job on exit %d, the status of a run whose only problem is a few invalid rows", job, code)
		}
		if !slices.Contains(codes, 1) {
			t.Errorf("%s: podFailurePolicy does not fail on exit 1 (failed or unverified rows, or over --max-invalid): a retry would send them again", job)
		}
	}
	for name, spec := range podSpecs(loadManifests(t)) {
		for _, c := range spec.Containers {
			if _, set := argValue(c.Args, "strict"); set || slices.Contains(c.Args, "--strict") {
				t.Errorf("%s: --strict makes every night with an invalid row a failed Job", name)
			}
		}
	}
	objs := loadManifests(t)
	for name, spec := range podSpecs(objs) {
		if s := mountedSettings(t, objs, spec); s["strict"] != nil {
			t.Errorf("%s: its ConfigMap sets strict: every night with an invalid row would be a failed Job", name)
		}
	}
}
