package deploy

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// copyTree copies the directory src to dst, replacing old by new in every
// file's name and contents when old is not empty.
func copyTree(t *testing.T, src, dst, old, new string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if old != "" {
			rel = strings.ReplaceAll(rel, old, new)
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if old != "" {
			b = []byte(strings.ReplaceAll(string(b), old, new))
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// withPartner returns a copy of k8s/ in a temporary directory with a new
// partner made as deploy/README.md says: a copy of k8s/partners/acme with
// "acme" replaced by name everywhere in it.
func withPartner(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	copyTree(t, "k8s", filepath.Join(root, "k8s"), "", "")
	copyTree(t, "k8s/partners/acme", filepath.Join(root, "k8s/partners", name), "acme", name)
	return root
}

// envValue resolves what Kubernetes puts into one environment variable of
// a pod of job (its pod template's labels, the Job's name): the test's
// stand-in for the kubelet.
func envValue(e corev1.EnvVar, labels map[string]string, job string) (string, error) {
	if e.ValueFrom == nil {
		return e.Value, nil
	}
	if r := e.ValueFrom.SecretKeyRef; r != nil {
		// A Secret's value (the backfill's ledger URL) names no file.
		return "(secret " + r.Name + " " + r.Key + ")", nil
	}
	if e.ValueFrom.FieldRef == nil {
		return "", fmt.Errorf("env %s: only values, secrets and fieldRefs are resolved here", e.Name)
	}
	m := regexp.MustCompile(`^metadata\.labels\['([^']+)'\]$`).FindStringSubmatch(e.ValueFrom.FieldRef.FieldPath)
	if m == nil {
		return "", fmt.Errorf("env %s: fieldRef %s is not a label", e.Name, e.ValueFrom.FieldRef.FieldPath)
	}
	switch m[1] {
	case "job-name", "batch.kubernetes.io/job-name":
		return job, nil
	}
	v, ok := labels[m[1]]
	if !ok {
		return "", fmt.Errorf("env %s: the pod template has no label %s", e.Name, m[1])
	}
	return v, nil
}

// outputFlags are upload's flags that name a file the run writes (the lock,
// the meta and summary files beside the results file follow its name).
var outputFlags = []string{"results", "rejects", "summary-json", "report", "metrics-file"}

// podIO is what one pod reads and writes.
type podIO struct {
	pod, partner, input string
	writes              []string
}

// podFiles returns, for each pod a Job or CronJob of o runs (one per
// shard of an Indexed Job), the input it reads and the files it writes,
// with $(VAR) and bulkload's {name} and {shard} expanded; {date}, {time}
// and {sha} stay as they are (they tell runs apart, not partners).
func podFiles(t *testing.T, o object) []podIO {
	t.Helper()
	var tmpl *corev1.PodTemplateSpec
	job := o.name
	completions := 1
	indexed := false
	switch v := o.obj.(type) {
	case *batchv1.CronJob:
		tmpl = &v.Spec.JobTemplate.Spec.Template
		job = o.name + "-29387190" // the CronJob controller's <name>-<minutes>
	case *batchv1.Job:
		tmpl = &v.Spec.Template
		if v.Spec.Completions != nil {
			completions = int(*v.Spec.Completions)
		}
		indexed = v.Spec.CompletionMode != nil && *v.Spec.CompletionMode == batchv1.IndexedCompletion
	default:
		return nil
	}
	c := tmpl.Spec.Containers[0]
	vars := map[string]string{}
	for _, e := range c.Env {
		v, err := envValue(e, tmpl.Labels, job)
		if err != nil {
			t.Errorf("%s %s: %v", o.file, o.name, err)
		}
		vars[e.Name] = v
	}
	varRef := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = varRef.ReplaceAllStringFunc(a, func(m string) string { return vars[m[2:len(m)-1]] })
	}
	input := args[len(args)-1]
	name := filepath.Base(input)
	for ext := filepath.Ext(name); ext != ""; ext = filepath.Ext(name) {
		name = strings.TrimSuffix(name, ext)
	}
	var out []podIO
	for k := range completions {
		pod := fmt.Sprintf("%s %s", o.file, o.name)
		shard := ""
		if indexed {
			shard = fmt.Sprintf("%d-of-%d", k, completions)
			pod += " shard " + shard
		}
		var writes []string
		for _, flag := range outputFlags {
			p, ok := argValue(args, flag)
			if !ok {
				continue
			}
			if strings.Contains(p, "{shard}") && !indexed {
				t.Errorf("%s: --%s %s has {shard}, but the pods are not an Indexed Job's", pod, flag, p)
			}
			p = strings.ReplaceAll(strings.ReplaceAll(p, "{name}", name), "{shard}", shard)
			writes = append(writes, p)
		}
		out = append(out, podIO{pod: pod, partner: tmpl.Labels["bulkload/partner"], input: input, writes: writes})
	}
	return out
}

// TestPartnersWriteApart follows deploy/README.md's way to a new partner
// (copy k8s/partners/acme, replace "acme" everywhere in it) and renders
// every partner's nightly CronJob and backfill: no two pods (two partners,
// a partner's night and its backfill, two shards) write one file, and no
// two partners read one input. Before the backfill's names carried the
// partner, every partner's shard K wrote backfill.shard-K-of-N.*, and the
// second partner's backfill was refused (exit 2: the results file belongs
// to another input).
func TestPartnersWriteApart(t *testing.T) {
	root := withPartner(t, "zeta")
	objs := loadManifestsIn(t, root)
	writer := map[string]string{}
	reader := map[string]podIO{}
	pods := 0
	partners := map[string]bool{}
	for _, o := range objs {
		for _, f := range podFiles(t, o) {
			pods++
			partners[f.partner] = true
			if other, ok := reader[f.input]; ok && other.partner != f.partner {
				t.Errorf("%s and %s read one input, %s", other.pod, f.pod, f.input)
			}
			reader[f.input] = f
			if len(f.writes) == 0 {
				t.Errorf("%s writes no file", f.pod)
			}
			for _, p := range f.writes {
				if other, ok := writer[p]; ok {
					t.Errorf("%s and %s both write %s", other, f.pod, p)
				}
				writer[p] = f.pod
			}
		}
	}
	for _, want := range []string{"acme", "zeta", "globex"} {
		if !partners[want] {
			t.Errorf("no pod of partner %s rendered (partners %v)", want, slices.Sorted(maps.Keys(partners)))
		}
	}
	// acme's and zeta's CronJobs and four shards each, globex's CronJob.
	if pods < 11 {
		t.Errorf("%d pods rendered, want at least 11", pods)
	}
	// The copy's objects are its own: no name of acme's is left in it.
	names := map[string]string{}
	for _, o := range objs {
		key := o.kind + " " + o.name
		if other, ok := names[key]; ok {
			t.Errorf("%s %s is rendered by both %s and %s", o.kind, o.name, other, o.file)
		}
		names[key] = o.file
	}
}
