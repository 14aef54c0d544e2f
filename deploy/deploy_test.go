package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// object is one document of a manifest file, decoded into its API type.
type object struct {
	file string
	kind string
	name string
	obj  any
}

// decodeStrict decodes one YAML document into the k8s.io/api type its kind
// names. A field the type does not have (a typo), a duplicate key or a
// value of the wrong type is an error.
func decodeStrict(doc []byte) (any, string, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, "", err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "batch/v1 CronJob":
		obj = &batchv1.CronJob{}
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 PersistentVolumeClaim":
		obj = &corev1.PersistentVolumeClaim{}
	case "networking.k8s.io/v1 NetworkPolicy":
		obj = &networkingv1.NetworkPolicy{}
	default:
		return nil, tm.Kind, fmt.Errorf("apiVersion %q kind %q: not a kind this test knows; add it to decodeStrict", tm.APIVersion, tm.Kind)
	}
	// As the API server's strict field validation does: duplicate YAML keys
	// refused, then JSON field names matched case-sensitively (encoding/json,
	// under sigs.k8s.io/yaml.UnmarshalStrict, would take
	// readOnlyRootFileSystem for readOnlyRootFilesystem).
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, tm.Kind, err
	}
	strictErrs, err := kjson.UnmarshalStrict(j, obj)
	if err != nil {
		return nil, tm.Kind, err
	}
	if len(strictErrs) > 0 {
		return nil, tm.Kind, errors.Join(strictErrs...)
	}
	return obj, tm.Kind, nil
}

// splitDocs splits a multi-document YAML file at its "---" lines, dropping
// documents that hold only comments.
func splitDocs(b []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	flush := func() {
		for _, l := range strings.Split(string(cur), "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				docs = append(docs, cur)
				break
			}
		}
		cur = nil
	}
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.TrimRight(l, "\r\n") == "---" {
			flush()
			continue
		}
		cur = append(cur, l...)
	}
	flush()
	return docs
}

// kustomizations are the folders of k8s/ that get applied: the shared
// objects and each partner's nightly run and backfill. The bases
// (k8s/base, k8s/backfill) are rendered through them.
func kustomizations(t *testing.T) []string {
	return kustomizationsIn(t, ".")
}

// kustomizationsIn are the kustomizations of the k8s/ folder under root.
func kustomizationsIn(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	for _, pattern := range []string{"k8s/shared", "k8s/partners/*", "k8s/partners/*/backfill"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, m...)
	}
	if len(dirs) < 3 {
		t.Fatalf("kustomizations = %v, want k8s/shared and at least one partner with its backfill", dirs)
	}
	return dirs
}

// render builds a kustomization as `kubectl apply -k` would, with the
// kustomize library kubectl embeds, and returns its YAML.
func render(dir string) ([]byte, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	return m.AsYaml()
}

// loadManifests renders every kustomization and decodes each object
// strictly: what is tested is what `kubectl apply -k` would send.
func loadManifests(t *testing.T) []object {
	return loadManifestsIn(t, ".")
}

// loadManifestsIn renders and decodes the kustomizations under root.
func loadManifestsIn(t *testing.T, root string) []object {
	t.Helper()
	var objs []object
	for _, dir := range kustomizationsIn(t, root) {
		b, err := render(dir)
		if err != nil {
			t.Errorf("kustomize build %s: %v", dir, err)
			continue
		}
		for i, doc := range splitDocs(b) {
			obj, kind, err := decodeStrict(doc)
			if err != nil {
				t.Errorf("%s document %d (%s): %v", dir, i+1, kind, err)
				continue
			}
			var name string
			if m, ok := obj.(interface{ GetName() string }); ok {
				name = m.GetName()
			}
			file, err := filepath.Rel(root, dir)
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, object{file: file, kind: kind, name: name, obj: obj})
		}
	}
	return objs
}

func TestManifestsDecodeStrictly(t *testing.T) {
	objs := loadManifests(t)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.kind]++
		// A Secret in what gets applied would overwrite the real one
		// with a placeholder: it is created by hand.
		if o.kind == "Secret" {
			t.Errorf("%s renders the Secret %s: create it with kubectl create secret instead", o.file, o.name)
		}
	}
	for _, want := range []string{"CronJob", "Job", "ConfigMap", "PersistentVolumeClaim", "NetworkPolicy"} {
		if kinds[want] == 0 {
			t.Errorf("no %s among the manifests (found %v)", want, kinds)
		}
	}
}

// TestEveryManifestIsRendered: each YAML file under k8s/ is a
// kustomization or is named by one, so no manifest escapes the tests.
func TestEveryManifestIsRendered(t *testing.T) {
	named := map[string]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		if named[dir] {
			return
		}
		named[dir] = true
		b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			return
		}
		var k struct {
			Resources          []string                   `json:"resources"`
			Patches            []struct{ Path string }    `json:"patches"`
			ConfigMapGenerator []struct{ Files []string } `json:"configMapGenerator"`
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatalf("%s/kustomization.yaml: %v", dir, err)
		}
		named[filepath.Join(dir, "kustomization.yaml")] = true
		for _, r := range k.Resources {
			p := filepath.Join(dir, r)
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				walk(p)
			}
			named[p] = true
		}
		for _, p := range k.Patches {
			named[filepath.Join(dir, p.Path)] = true
		}
		for _, g := range k.ConfigMapGenerator {
			for _, f := range g.Files {
				if _, file, ok := strings.Cut(f, "="); ok {
					f = file // key=file
				}
				named[filepath.Join(dir, f)] = true
			}
		}
	}
	for _, dir := range kustomizations(t) {
		walk(dir)
	}
	err := filepath.WalkDir("k8s", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !named[p] {
			t.Errorf("%s is in no kustomization that gets applied: the tests never see it", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDecodeStrictRefusesTypos proves the decoder is strict: the nightly
// CronJob with one field misspelt, or a value of the wrong type, fails.
func TestDecodeStrictRefusesTypos(t *testing.T) {
	b, err := os.ReadFile("k8s/base/nightly-cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := decodeStrict(b); err != nil {
		t.Fatalf("decodeStrict(nightly-cronjob.yaml) = %v, want no error", err)
	}
	for _, tc := range []struct{ name, old, new string }{
		{"misspelt field", "concurrencyPolicy:", "concurencyPolicy:"},
		{"misspelt nested field", "readOnlyRootFilesystem:", "readOnlyRootFileSystem:"},
		{"wrong type", "backoffLimit: 3", "backoffLimit: three"},
		{"duplicate key", "      backoffLimit: 3\n", "      backoffLimit: 3\n      backoffLimit: 4\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(string(b), tc.old, tc.new, 1)
			if bad == string(b) {
				t.Fatalf("%q not found in the manifest", tc.old)
			}
			if _, _, err := decodeStrict([]byte(bad)); err == nil {
				t.Errorf("decodeStrict(manifest with %s) = nil, want an error", tc.name)
			}
		})
	}
}

// podSpecs returns every pod template of the manifests, by file.
func podSpecs(objs []object) map[string]*corev1.PodSpec {
	out := map[string]*corev1.PodSpec{}
	for _, o := range objs {
		switch v := o.obj.(type) {
		case *batchv1.CronJob:
			out[o.file+" "+o.name] = &v.Spec.JobTemplate.Spec.Template.Spec
		case *batchv1.Job:
			out[o.file+" "+o.name] = &v.Spec.Template.Spec
		}
	}
	return out
}

// argValue returns the value of --name in args (as --name=V or --name V).
func argValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// mountOf returns the volume mounted at the directory holding path.
func mountOf(spec *corev1.PodSpec, c *corev1.Container, path string) (*corev1.Volume, *corev1.VolumeMount) {
	var best *corev1.VolumeMount
	for i, m := range c.VolumeMounts {
		if strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") && (best == nil || len(m.MountPath) > len(best.MountPath)) {
			best = &c.VolumeMounts[i]
		}
	}
	if best == nil {
		return nil, nil
	}
	for i, v := range spec.Volumes {
		if v.Name == best.Name {
			return &spec.Volumes[i], best
		}
	}
	return nil, best
}

// TestPodsRunSafely checks what the manifests promise: non-root, a
// read-only root filesystem, measured resource requests, the secret as a
// mounted file, results on a PersistentVolumeClaim, --resume for retried
// pods, and every $(VAR) in the arguments defined.
func TestPodsRunSafely(t *testing.T) {
	specs := podSpecs(loadManifests(t))
	if len(specs) < 2 {
		t.Fatalf("want the CronJob's and the Indexed Job's pod templates, got %d", len(specs))
	}
	varRef := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	for where, spec := range specs {
		if spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: restartPolicy %q, want Never (a retry is a new pod that resumes)", where, spec.RestartPolicy)
		}
		if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
			t.Errorf("%s: pod must set runAsNonRoot: true and a non-zero runAsUser", where)
		}
		if len(spec.Containers) != 1 {
			t.Fatalf("%s: want one container, got %d", where, len(spec.Containers))
		}
		c := &spec.Containers[0]
		if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: container must set readOnlyRootFilesystem: true and allowPrivilegeEscalation: false", where)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
				t.Errorf("%s: no %s request", where, r)
			}
		}
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.Cmp(c.Resources.Requests[corev1.ResourceMemory]) < 0 {
			t.Errorf("%s: memory limit missing or below the request", where)
		}
		if !slices.Contains(c.Args, "--resume") {
			t.Errorf("%s: args lack --resume: a retried pod would start over", where)
		}
		if secret, ok := argValue(c.Args, "client-secret-file"); !ok {
			t.Errorf("%s: no --client-secret-file", where)
		} else if v, _ := mountOf(spec, c, secret); v == nil || v.Secret == nil {
			t.Errorf("%s: --client-secret-file %s is not on a Secret volume", where, secret)
		}
		for _, flag := range []string{"results", "summary-json", "rejects", "report"} {
			p, ok := argValue(c.Args, flag)
			if !ok {
				t.Errorf("%s: no --%s", where, flag)
				continue
			}
			if v, m := mountOf(spec, c, p); v == nil || v.PersistentVolumeClaim == nil || m.ReadOnly {
				t.Errorf("%s: --%s %s is not on a writable PersistentVolumeClaim", where, flag, p)
			}
		}
		defined := map[string]bool{}
		for _, e := range c.Env {
			defined[e.Name] = true
		}
		for _, a := range c.Args {
			for _, m := range varRef.FindAllStringSubmatch(a, -1) {
				if !defined[m[1]] {
					t.Errorf("%s: argument %q uses $(%s), which the container's env does not define (Kubernetes would pass it literally)", where, a, m[1])
				}
			}
		}
	}
}

func TestNightlyCronJob(t *testing.T) {
	objs := loadManifests(t)
	n := 0
	for _, o := range objs {
		cj, ok := o.obj.(*batchv1.CronJob)
		if !ok {
			continue
		}
		n++
		where := o.file + " CronJob " + o.name
		js := cj.Spec.JobTemplate.Spec
		if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
			t.Errorf("%s: concurrencyPolicy %q, want Forbid: two runs would share one results file", where, cj.Spec.ConcurrencyPolicy)
		}
		if js.ActiveDeadlineSeconds == nil || *js.ActiveDeadlineSeconds <= 0 {
			t.Errorf("%s: no activeDeadlineSeconds: a stuck run would block the next night (Forbid)", where)
		}
		if js.BackoffLimit == nil || *js.BackoffLimit < 1 {
			t.Errorf("%s: backoffLimit must allow a retry (the retried pod resumes)", where)
		}
		// The night's metrics are pushed at the end, under the partner's
		// name: the input's base name (leads) would be the same for every
		// partner.
		spec := &js.Template.Spec
		args := spec.Containers[0].Args
		push, ok := argValue(args, "pushgateway")
		if !ok {
			push, _ = mountedSettings(t, objs, spec)["pushgateway"].(string)
		}
		if push == "" {
			t.Errorf("%s: the CronJob pushes no metrics: give --pushgateway or the ConfigMap's pushgateway key", where)
		}
		if name, _ := argValue(args, "job-name"); name == "" {
			t.Errorf("%s: the CronJob has no --job-name: its metrics would be labelled with the input's base name", where)
		}
	}
	if n < 2 {
		t.Errorf("%d CronJobs rendered, want one per partner overlay (at least two)", n)
	}
}

// mountedSettings returns the bulkload.yaml of the ConfigMap that spec
// mounts as its volume "config", decoded.
func mountedSettings(t *testing.T, objs []object, spec *corev1.PodSpec) map[string]any {
	t.Helper()
	var name string
	for _, v := range spec.Volumes {
		if v.Name == "config" && v.ConfigMap != nil {
			name = v.ConfigMap.Name
		}
	}
	for _, o := range objs {
		if v, ok := o.obj.(*corev1.ConfigMap); ok && o.name == name {
			var settings map[string]any
			if err := yaml.Unmarshal([]byte(v.Data["bulkload.yaml"]), &settings); err != nil {
				t.Fatalf("%s ConfigMap %s bulkload.yaml: %v", o.file, o.name, err)
			}
			return settings
		}
	}
	t.Fatalf("the pods mount the ConfigMap %q, which no kustomization renders", name)
	return nil
}

func TestBackfillIndexedJob(t *testing.T) {
	objs := loadManifests(t)
	n := 0
	for _, o := range objs {
		if job, ok := o.obj.(*batchv1.Job); ok {
			n++
			t.Run(o.name, func(t *testing.T) { checkBackfill(t, objs, job) })
		}
	}
	if n == 0 {
		t.Fatal("no Job")
	}
}

func checkBackfill(t *testing.T, objs []object, job *batchv1.Job) {
	// A finished Job is deleted after a while (its results are on the
	// volume); without a TTL every backfill's Job and pods stay forever.
	if ttl := job.Spec.TTLSecondsAfterFinished; ttl == nil || *ttl < 3600 {
		t.Errorf("ttlSecondsAfterFinished = %v, want one (at least an hour, to read the logs)", ttl)
	}
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode must be Indexed")
	}
	if job.Spec.Completions == nil || *job.Spec.Completions < 2 {
		t.Fatalf("completions must be 2 or more")
	}
	n := *job.Spec.Completions
	c := job.Spec.Template.Spec.Containers[0]
	// Every pod reads the same file and takes its own shard: K from
	// JOB_COMPLETION_INDEX, N from JOB_COMPLETIONS, which must be the Job's
	// completions (a wrong N would leave rows in no shard, or in two).
	if v, _ := argValue(c.Args, "shard"); v != "auto" {
		t.Errorf("an Indexed Job's pods must pass --shard=auto, got %q", v)
	}
	var completions string
	for _, e := range c.Env {
		if e.Name == "JOB_COMPLETIONS" {
			completions = e.Value
		}
	}
	if completions != strconv.Itoa(int(n)) {
		t.Errorf("env JOB_COMPLETIONS = %q, want spec.completions %d", completions, n)
	}
	// Each shard writes its own results: two pods on one file would
	// corrupt it.
	for _, flag := range []string{"results", "rejects", "summary-json"} {
		if p, _ := argValue(c.Args, flag); !strings.Contains(p, "{shard}") {
			t.Errorf("--%s %q lacks {shard}: the shards would share one file", flag, p)
		}
	}
	// The rate limit is per client, shared by every shard.
	settings := mountedSettings(t, objs, &job.Spec.Template.Spec)
	total, ok := settings["rate"].(float64)
	if !ok {
		t.Fatalf("the ConfigMap's rate %v is not a number: the shards' --rate is checked against it", settings["rate"])
	}
	v, _ := argValue(c.Args, "rate")
	rate, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("the Indexed Job's --rate %q is not a number: %v", v, err)
	}
	if rate*float64(n) > total {
		t.Errorf("--rate %v x %d shards = %v calls/s, over the ConfigMap's rate %v: give each shard rate / completions", rate, n, rate*float64(n), total)
	}
	// Each shard pushes into a group of its own (the shard is in the
	// grouping key), under a job_name apart from the nightly run's.
	push, set := argValue(c.Args, "pushgateway")
	if !set {
		push, _ = settings["pushgateway"].(string)
	}
	if push == "" {
		t.Error("the backfill pushes no metrics: give --pushgateway or the ConfigMap's pushgateway key")
	}
	if name, _ := argValue(c.Args, "job-name"); name == "" {
		t.Error("the backfill has no --job-name: its metrics would be labelled with the input's base name")
	}
}

// bulkloadFlags builds the main module's bulkload and returns the flags
// `bulkload upload -h` lists.
func bulkloadFlags(t *testing.T) map[string]bool {
	flags, _ := bulkloadHelp(t)
	return flags
}

// buildBulkload builds the main module's bulkload into a temporary
// directory and returns its path.
func buildBulkload(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bulkload")
	build := exec.Command("go", "build", "-C", "..", "-o", bin, "./cmd/bulkload")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/bulkload: %v\n%s", err, out)
	}
	return bin
}

// bulkloadHelp builds the main module's bulkload and returns the flags and
// the exit statuses `bulkload upload -h` lists.
func bulkloadHelp(t *testing.T) (map[string]bool, map[int32]bool) {
	t.Helper()
	bin := buildBulkload(t)
	var stdout, stderr bytes.Buffer
	help := exec.Command(bin, "upload", "-h")
	help.Stdout, help.Stderr = &stdout, &stderr
	if err := help.Run(); err != nil {
		t.Fatalf("bulkload upload -h: %v\n%s", err, stderr.String())
	}
	flags := map[string]bool{}
	re := regexp.MustCompile(`(?m)^\s+--?([a-z][a-z0-9-]*)\b`)
	for _, m := range re.FindAllStringSubmatch(stdout.String()+stderr.String(), -1) {
		flags[m[1]] = true
	}
	if !flags["resume"] || !flags["results"] {
		t.Fatalf("could not read the flags from bulkload upload -h:\n%s%s", stdout.String(), stderr.String())
	}
	exits := map[int32]bool{}
	_, table, _ := strings.Cut(stdout.String()+stderr.String(), "Exit status:")
	for _, m := range regexp.MustCompile(`(?m)^  (\d+) `).FindAllStringSubmatch(table, -1) {
		var code int32
		fmt.Sscan(m[1], &code)
		exits[code] = true
	}
	if !exits[0] || !exits[1] {
		t.Fatalf("could not read the exit statuses from bulkload upload -h:\n%s", table)
	}
	return flags, exits
}

// TestFailurePolicyExitCodes: the exit statuses the Jobs' podFailurePolicy
// names are statuses `bulkload upload -h` lists.
func TestFailurePolicyExitCodes(t *testing.T) {
	_, exits := bulkloadHelp(t)
	n := 0
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
			if r.OnExitCodes == nil {
				continue
			}
			for _, c := range r.OnExitCodes.Values {
				n++
				if !exits[c] {
					t.Errorf("%s %s: podFailurePolicy names exit status %d, which bulkload upload never returns", o.file, o.name, c)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no podFailurePolicy names an exit status")
	}
}

// flagsIn returns the --flags of a command line, without their values.
func flagsIn(cmdline string) []string {
	re := regexp.MustCompile(`(?:^|[\s"'])--([a-z][a-z0-9-]*)`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(cmdline, -1) {
		out = append(out, m[1])
	}
	return out
}

// usedFlags collects every flag the examples pass, with where.
func usedFlags(t *testing.T) map[string][]string {
	t.Helper()
	used := map[string][]string{}
	add := func(where, cmdline string) {
		for _, f := range flagsIn(cmdline) {
			used[f] = append(used[f], where)
		}
	}
	for _, o := range loadManifests(t) {
		switch v := o.obj.(type) {
		case *corev1.ConfigMap:
			for key, text := range v.Data {
				if !strings.HasSuffix(key, ".yaml") {
					continue
				}
				var settings map[string]any
				if err := yaml.Unmarshal([]byte(text), &settings); err != nil {
					t.Errorf("%s ConfigMap %s key %s: %v", o.file, o.name, key, err)
				}
				for k := range settings {
					used[k] = append(used[k], o.file+" ConfigMap "+key)
				}
			}
		}
	}
	for where, spec := range podSpecs(loadManifests(t)) {
		for _, c := range spec.Containers {
			add(where, strings.Join(append(slices.Clone(c.Command), c.Args...), " "))
		}
	}
	units, _ := filepath.Glob("systemd/*.service")
	for _, f := range units {
		u := parseUnit(t, f)
		for _, v := range u["Service"]["ExecStart"] {
			add(f+" ExecStart", v)
		}
	}
	crons, _ := filepath.Glob("cron/*")
	for _, f := range crons {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && strings.Contains(l, "bulkload upload") {
				add(f, l)
			}
		}
	}
	return used
}

// TestFlagsExist checks that every flag the manifests, units and crontab
// pass (and every key of the ConfigMap's bulkload.yaml) is a flag of
// `bulkload upload -h` as built from this repository.
func TestFlagsExist(t *testing.T) {
	used := usedFlags(t)
	for _, f := range []string{"config", "resume", "results", "client-secret-file"} {
		if len(used[f]) == 0 {
			t.Errorf("no example passes --%s", f)
		}
	}
	have := bulkloadFlags(t)
	for f, where := range used {
		if !have[f] {
			t.Errorf("--%s (in %s) is not a flag of bulkload upload", f, strings.Join(slices.Compact(slices.Sorted(slices.Values(where))), ", "))
		}
	}
}

// unit is a systemd unit file: section, key, values.
type unit map[string]map[string][]string

// unitKeys are the keys each section of the examples may use: a misspelt
// key fails here instead of being ignored (with a warning) by systemd.
var unitKeys = map[string][]string{
	"Unit":    {"Description", "Documentation", "Wants", "After", "Requires", "OnFailure"},
	"Install": {"WantedBy"},
	"Timer":   {"OnCalendar", "RandomizedDelaySec", "Persistent", "Unit", "AccuracySec"},
	"Service": {"Type", "DynamicUser", "User", "Group", "StateDirectory", "StateDirectoryMode", "LoadCredential",
		"Environment", "ExecStart", "TimeoutStopSec", "TimeoutStartSec", "NoNewPrivileges", "ProtectSystem",
		"ProtectHome", "PrivateTmp", "PrivateDevices", "ProtectKernelTunables", "ProtectKernelModules",
		"ProtectControlGroups", "RestrictAddressFamilies", "ReadOnlyPaths", "ReadWritePaths", "SupplementaryGroups", "MemoryHigh", "MemoryMax", "CPUQuota",
		"UMask", "CapabilityBoundingSet", "AmbientCapabilities", "DevicePolicy", "ProtectKernelLogs", "ProtectClock",
		"ProtectHostname", "ProtectProc", "ProcSubset", "RestrictNamespaces", "RestrictRealtime", "RestrictSUIDSGID",
		"LockPersonality", "MemoryDenyWriteExecute", "RemoveIPC", "PrivateMounts", "SystemCallArchitectures",
		"SystemCallFilter", "SystemCallErrorNumber"},
}

func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unit{}
	section := ""
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			section = l[1 : len(l)-1]
			if _, ok := unitKeys[section]; !ok {
				t.Errorf("%s:%d: unknown section [%s]", path, i+1, section)
			}
			if u[section] == nil {
				u[section] = map[string][]string{}
			}
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok || section == "" {
				t.Errorf("%s:%d: not Key=Value in a section: %q", path, i+1, l)
				continue
			}
			if !slices.Contains(unitKeys[section], k) {
				t.Errorf("%s:%d: key %q is not one of [%s]'s known keys %v", path, i+1, k, section, unitKeys[section])
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

func TestSystemdUnits(t *testing.T) {
	svc := parseUnit(t, "systemd/bulkload@.service")
	timer := parseUnit(t, "systemd/bulkload@.timer")
	exec := strings.Join(svc["Service"]["ExecStart"], " ")
	if !strings.Contains(exec, "--resume") || !strings.Contains(exec, "--client-secret-file %d/client-secret") {
		t.Errorf("ExecStart must resume and read the secret from the credentials directory (%%d): %s", exec)
	}
	if len(svc["Service"]["LoadCredential"]) == 0 {
		t.Error("the service must hand the secret over with LoadCredential")
	}
	if got := timer["Timer"]["Unit"]; len(got) != 1 || got[0] != "bulkload@%i.service" {
		t.Errorf("timer Unit = %v, want bulkload@%%i.service", got)
	}
	// Results are named by bulkload's own {date}: no shell, no `date`
	// (whose % a unit file would take for a specifier).
	if strings.Contains(exec, "date ") || strings.Contains(exec, "/bin/sh") || !strings.HasPrefix(exec, "/usr/local/bin/bulkload ") {
		t.Errorf("ExecStart must run bulkload itself, no shell or date: %s", exec)
	}
	for _, flag := range []string{"results", "rejects", "summary-json"} {
		if v, _ := argValue(strings.Fields(exec), flag); !strings.Contains(v, "{date}") {
			t.Errorf("ExecStart --%s %q: want the {date} placeholder (a file per night)", flag, v)
		}
	}
	// Metrics for node_exporter, one file per partner: %i is the
	// instance specifier, single; %%i would name every partner's file
	// "bulkload-%i.prom".
	const metrics = "/var/lib/node_exporter/textfile_collector/bulkload-%i.prom"
	if !strings.Contains(exec, "--metrics-file "+metrics+" ") || !strings.Contains(exec, "--job-name %i ") {
		t.Errorf("ExecStart must pass --metrics-file %s --job-name %%i: %s", metrics, exec)
	}
	// ProtectSystem=strict: without ReadWritePaths the directory is
	// read-only and every run exits 2 before the first call.
	if !slices.Contains(svc["Service"]["ReadWritePaths"], filepath.Dir(metrics)) {
		t.Errorf("ReadWritePaths = %v, want %s (ProtectSystem=strict)", svc["Service"]["ReadWritePaths"], filepath.Dir(metrics))
	}
}

func TestCrontab(t *testing.T) {
	b, err := os.ReadFile("cron/bulkload.crontab")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "bulkload upload") && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("want one crontab line running bulkload upload, got %d", len(lines))
	}
	fields := strings.Fields(lines[0])
	if len(fields) < 8 {
		t.Fatalf("crontab line has %d fields, want 5 time fields, a user and a command", len(fields))
	}
	// cron turns an unescaped % into a newline: the command would be cut.
	if regexp.MustCompile(`[^\\]%`).MatchString(strings.Join(fields[6:], " ")) {
		t.Errorf("crontab command has an unescaped %%: write \\%%")
	}
	// Files are named by bulkload's own placeholders, never by a shell's
	// `date` (whose % cron takes for a newline).
	// {date}-{sha}: each input its own files per day, a rerun resumes (the
	// line is README.md's, run under env -i by cmd/bulkload's
	// TestCronLineOneNight).
	if !strings.Contains(lines[0], "--resume") || !regexp.MustCompile(`--results \S*\{date\}-\{sha\}`).MatchString(lines[0]) {
		t.Errorf("the crontab line must resume and name results by {date}-{sha}: %s", lines[0])
	}
	if !strings.HasPrefix(fields[6], "/") {
		t.Errorf("the crontab line calls %s: cron's PATH is /usr/bin:/bin, name the binary by its absolute path", fields[6])
	}
	if strings.Contains(lines[0], "date ") || strings.Contains(lines[0], "$(") || strings.Contains(lines[0], "`") {
		t.Errorf("the crontab line runs a shell command (date?): bulkload's placeholders name the files: %s", lines[0])
	}
	// Debian's cron ignores CRON_TZ: a line relying on it runs at the
	// host's local time. And with the output sent to a log, cron has
	// nothing to mail: a MAILTO address would promise mail that never comes.
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "CRON_TZ=") || strings.HasPrefix(l, "TZ=") {
			t.Errorf("%q: Debian's cron ignores it; the time fields are the host's local time", l)
		}
		if v, ok := strings.CutPrefix(l, "MAILTO="); ok && strings.Contains(lines[0], ">>") && v != `""` {
			t.Errorf("MAILTO=%s, but the line sends its output to a log: cron mails nothing; write MAILTO=\"\"", v)
		}
	}
	if !strings.Contains(lines[0], "--metrics-file /var/lib/node_exporter/textfile_collector/") || !strings.Contains(lines[0], "--job-name ") {
		t.Errorf("the crontab line must write metrics into node_exporter's textfile directory with a --job-name: %s", lines[0])
	}
}
