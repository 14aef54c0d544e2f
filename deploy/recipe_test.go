package deploy

import (
	"os"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// shellWords splits a /bin/sh command line of plain words and single
// quotes (all the crontab line uses) into its words, up to the first
// redirection.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted = !quoted
			inWord = true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	for i, w := range words {
		if strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") {
			return words[:i]
		}
	}
	return words
}

// recipeOutputs are the files of the nightly recipe, by flag: each named
// <the partner's place>{name}-{date}-{sha}<suffix>.
var recipeOutputs = []struct{ flag, suffix string }{
	{"results", ".results.csv"},
	{"rejects", ".rejects.csv"},
	{"summary-json", ".summary.json"},
	{"report", ".report.html"},
}

// recipeProblems says how an upload's arguments depart from the nightly
// recipe of README.md ("Nightly jobs on a fixed export name"): --resume,
// --progress log, a --job-name, and the results, rejects, summary and run
// report all named {name}-{date}-{sha} in one place (a directory or a
// prefix of the partner's), so that a rerun resumes, a same-day re-drop
// gets files of its own and night 2 starts new ones.
func recipeProblems(args []string) []string {
	var out []string
	has := func(flag string) bool {
		for _, a := range args {
			if a == "--"+flag || strings.HasPrefix(a, "--"+flag+"=") {
				return true
			}
		}
		return false
	}
	if !has("resume") {
		out = append(out, "no --resume: a rerun would start over")
	}
	if v, _ := argValue(args, "progress"); v != "log" {
		out = append(out, "--progress "+v+", want log (a line every 10 s for a log file)")
	}
	if v, _ := argValue(args, "job-name"); v == "" {
		out = append(out, "no --job-name: the metrics would carry the input's base name")
	}
	if v, _ := argValue(args, "ledger"); v == "" || v == "off" {
		out = append(out, "no --ledger: a re-drop or a second run would send every lead again (and the default needs a HOME)")
	}
	place := ""
	for i, o := range recipeOutputs {
		v, ok := argValue(args, o.flag)
		if !ok {
			out = append(out, "no --"+o.flag)
			continue
		}
		p, ok := strings.CutSuffix(v, "{name}-{date}-{sha}"+o.suffix)
		if !ok {
			out = append(out, "--"+o.flag+" "+v+" is not named {name}-{date}-{sha}"+o.suffix)
			continue
		}
		if i > 0 && p != place {
			out = append(out, "--"+o.flag+" "+v+" is not beside the results file (in "+place+")")
		}
		if i == 0 {
			place = p
		}
	}
	return out
}

func TestRecipeProblems(t *testing.T) {
	good := "upload --resume --progress log --ledger /r/ledger.sqlite --results /r/{name}-{date}-{sha}.results.csv --rejects /r/{name}-{date}-{sha}.rejects.csv --summary-json /r/{name}-{date}-{sha}.summary.json --report /r/{name}-{date}-{sha}.report.html --job-name acme in.csv"
	for _, tc := range []struct {
		name, old, new string
		bad            bool
	}{
		{"the recipe", "", "", false},
		{"no --report (the README's cron line before)", "--report /r/{name}-{date}-{sha}.report.html ", "", true},
		{"{date} alone (the systemd unit before)", "/r/{name}-{date}-{sha}.results.csv", "/r/acme-{date}.results.csv", true},
		{"no --resume", "--resume ", "", true},
		{"a report elsewhere", "/r/{name}-{date}-{sha}.report.html", "/www/{name}-{date}-{sha}.report.html", true},
		{"progress bar", "--progress log", "--progress bar", true},
		{"no job name", "--job-name acme ", "", true},
		{"no ledger", "--ledger /r/ledger.sqlite ", "", true},
		{"ledger off", "--ledger /r/ledger.sqlite", "--ledger off", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := good
			if tc.old != "" {
				line = strings.Replace(good, tc.old, tc.new, 1)
				if line == good {
					t.Fatalf("%q not in the line", tc.old)
				}
			}
			if got := recipeProblems(strings.Fields(line)); (len(got) > 0) != tc.bad {
				t.Errorf("recipeProblems(%s) = %q, want problems: %v", line, got, tc.bad)
			}
		})
	}
}

// cronLine returns the line that runs bulkload upload in the crontab file,
// or in README.md's block under "# m h dom mon dow user".
func cronLine(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "30 2 * * * ") && strings.Contains(l, " upload ") {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d crontab lines running bulkload upload, want 1", path, len(found))
	}
	return found[0]
}

// TestOneNightlyRecipe: README.md's cron line, the crontab file, the
// systemd unit and every partner's CronJob run the same nightly recipe
// (recipeProblems). The README said "give --report to the nightly job"
// while its cron line had none, and the systemd unit named its files by
// {date} alone, so a same-day re-drop was refused with exit 2.
func TestOneNightlyRecipe(t *testing.T) {
	readme, crontab := cronLine(t, "../README.md"), cronLine(t, "cron/bulkload.crontab")
	if readme != crontab {
		t.Errorf("README.md's cron line and cron/bulkload.crontab's differ:\n  %s\n  %s", readme, crontab)
	}
	examples := map[string][]string{
		"cron/bulkload.crontab": shellWords(crontab)[6:],
	}
	svc := parseUnit(t, "systemd/bulkload@.service")
	examples["systemd/bulkload@.service ExecStart"] = strings.Fields(strings.Join(svc["Service"]["ExecStart"], " "))
	n := 0
	for _, o := range loadManifests(t) {
		if cj, ok := o.obj.(*batchv1.CronJob); ok {
			n++
			examples[o.file+" CronJob "+o.name] = cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args
		}
	}
	if n < 2 {
		t.Fatalf("%d CronJobs rendered, want one per partner", n)
	}
	for where, args := range examples {
		for _, p := range recipeProblems(args) {
			t.Errorf("%s: %s", where, p)
		}
	}
}

// TestLedgers: every nightly CronJob keeps its ledger on the results
// volume (a file that outlives the pod), and every backfill's pods share a
// PostgreSQL ledger whose URL comes from a Secret into BULKLOAD_LEDGER:
// never an argument, which a process listing shows with its password.
func TestLedgers(t *testing.T) {
	jobs := 0
	for _, o := range loadManifests(t) {
		var spec *corev1.PodSpec
		switch obj := o.obj.(type) {
		case *batchv1.CronJob:
			spec = &obj.Spec.JobTemplate.Spec.Template.Spec
			c := &spec.Containers[0]
			v, _ := argValue(c.Args, "ledger")
			if vol, _ := mountOf(spec, c, v); vol == nil || vol.PersistentVolumeClaim == nil {
				t.Errorf("%s CronJob %s: --ledger %q is not on a persistent volume", o.file, o.name, v)
			}
		case *batchv1.Job:
			jobs++
			spec = &obj.Spec.Template.Spec
			c := &spec.Containers[0]
			if v, ok := argValue(c.Args, "ledger"); ok {
				t.Errorf("%s Job %s: --ledger %q on the command line; want BULKLOAD_LEDGER from a Secret", o.file, o.name, v)
			}
			found := false
			for _, e := range c.Env {
				if e.Name == "BULKLOAD_LEDGER" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					found = true
				}
			}
			if !found {
				t.Errorf("%s Job %s: no BULKLOAD_LEDGER from a Secret: its shards would each keep a ledger of their own", o.file, o.name)
			}
		}
	}
	if jobs == 0 {
		t.Fatal("no backfill Job rendered")
	}
}

// TestImageStateFolder: the image has no HOME, so it names a state folder
// (XDG_STATE_HOME) for the default ledger, on the results volume (a folder
// the image's /data, owned by its user, holds, and that the manifests
// mount from a persistent volume), and every nightly CronJob's --ledger is
// that default: a pod of the image started by hand without --ledger meets
// the night's ledger instead of starting an empty one that would send
// every lead again.
func TestImageStateFolder(t *testing.T) {
	state := ""
	for _, l := range dockerfile(t) {
		if v, ok := strings.CutPrefix(l, "ENV XDG_STATE_HOME="); ok {
			state = v
		}
	}
	if !strings.HasPrefix(state, "/data/") {
		t.Fatalf("Dockerfile: XDG_STATE_HOME %q; want a folder under /data (the image's folders of its user, where the volumes go)", state)
	}
	script, err := os.ReadFile("../release/image.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), `"$ctx`+state+`"`) {
		t.Errorf("release/image.sh does not create %s in the image's /data", state)
	}
	want := state + "/bulkload/ledger.sqlite"
	crons := 0
	for _, o := range loadManifests(t) {
		cj, ok := o.obj.(*batchv1.CronJob)
		if !ok {
			continue
		}
		crons++
		spec := &cj.Spec.JobTemplate.Spec.Template.Spec
		c := &spec.Containers[0]
		if v, _ := argValue(c.Args, "ledger"); v != want {
			t.Errorf("%s CronJob %s: --ledger %q; want the image's default ledger %s", o.file, o.name, v, want)
		}
		if vol, _ := mountOf(spec, c, want); vol == nil || vol.PersistentVolumeClaim == nil {
			t.Errorf("%s CronJob %s: the image's state folder %s is not on a persistent volume", o.file, o.name, state)
		}
	}
	if crons == 0 {
		t.Fatal("no CronJob rendered")
	}
}
