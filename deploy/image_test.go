package deploy

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// dockerfile returns the instructions of Dockerfile, one per line,
// comments and blank lines left out.
func dockerfile(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestImageDefaultCommandAsDocumented runs the image's default command
// (ENTRYPOINT + CMD of Dockerfile) with a bulkload built here, its
// paths mapped to the repository's samples and a temporary /tmp, and
// checks that it exits with the status deploy/README.md promises for
// `podman run --rm bulkload:<version>`. release/check.sh runs the image
// itself in CI; this keeps the claim true wherever go test runs.
func TestImageDefaultCommandAsDocumented(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`podman run --rm bulkload:<version>` \\(the default command\\) exits (\\d+)").FindSubmatch(readme)
	if m == nil {
		t.Fatal("deploy/README.md does not state the exit status of the image's default command")
	}
	want, _ := strconv.Atoi(string(m[1]))
	var entry, cmd []string
	for _, l := range dockerfile(t) {
		if v, ok := strings.CutPrefix(l, "ENTRYPOINT "); ok {
			if err := json.Unmarshal([]byte(v), &entry); err != nil {
				t.Fatalf("ENTRYPOINT %s: %v", v, err)
			}
		}
		if v, ok := strings.CutPrefix(l, "CMD "); ok {
			if err := json.Unmarshal([]byte(v), &cmd); err != nil {
				t.Fatalf("CMD %s: %v", v, err)
			}
		}
	}
	if !slices.Equal(entry, []string{"/usr/local/bin/bulkload"}) || len(cmd) == 0 {
		t.Fatalf("ENTRYPOINT %q CMD %q: want the bulkload binary and a default command", entry, cmd)
	}
	tmp := t.TempDir()
	samples, err := filepath.Abs("../samples")
	if err != nil {
		t.Fatal(err)
	}
	args := slices.Clone(cmd)
	for i, a := range args {
		// One replacement per argument: a checkout under /tmp must not
		// have its samples path rewritten a second time.
		if rest, ok := strings.CutPrefix(a, "/samples/"); ok {
			args[i] = filepath.Join(samples, rest)
		} else if rest, ok := strings.CutPrefix(a, "/tmp/"); ok {
			args[i] = filepath.Join(tmp, rest)
		}
	}
	run := exec.Command(buildBulkload(t), args...)
	run.Dir = tmp
	out, err := run.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Errorf("the image's default command %q exits %d, deploy/README.md says %d\n%s", cmd, code, want, out)
	}
}

// TestOneBuildLine: the image holds the release's binary (no Go build of
// its own) on a base that is scratch or pinned by digest, and the release
// builds static binaries for linux and darwin x amd64 and arm64 with the
// VCS stamp that `bulkload version` reads.
func TestOneBuildLine(t *testing.T) {
	for _, l := range dockerfile(t) {
		if v, ok := strings.CutPrefix(l, "FROM "); ok {
			if base := strings.Fields(v)[0]; base != "scratch" && !regexp.MustCompile(`@sha256:[0-9a-f]{64}$`).MatchString(base) {
				t.Errorf("Dockerfile: FROM %s is not pinned by digest", base)
			}
		}
		if strings.HasPrefix(l, "RUN ") && strings.Contains(l, "go build") {
			t.Errorf("Dockerfile builds bulkload itself (%s): the image must take the release's binary", l)
		}
	}
	b, err := os.ReadFile("../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Builds []struct {
			Main    string   `json:"main"`
			Env     []string `json:"env"`
			Flags   []string `json:"flags"`
			Ldflags []string `json:"ldflags"`
			Goos    []string `json:"goos"`
			Goarch  []string `json:"goarch"`
		} `json:"builds"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(cfg.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml: %d builds, want 1", len(cfg.Builds))
	}
	bd := cfg.Builds[0]
	if bd.Main != "./cmd/bulkload" || !slices.Contains(bd.Env, "CGO_ENABLED=0") ||
		!slices.Contains(bd.Flags, "-trimpath") || !slices.Contains(bd.Flags, "-buildvcs=true") {
		t.Errorf(".goreleaser.yaml build %+v: want ./cmd/bulkload, CGO_ENABLED=0 (static), -trimpath and -buildvcs=true (the version from git)", bd)
	}
	for _, l := range bd.Ldflags {
		if strings.Contains(l, "-X") {
			t.Errorf(".goreleaser.yaml ldflags %q: no -X: the version comes from the VCS stamp", l)
		}
	}
	slices.Sort(bd.Goos)
	slices.Sort(bd.Goarch)
	if !slices.Equal(bd.Goos, []string{"darwin", "linux"}) || !slices.Equal(bd.Goarch, []string{"amd64", "arm64"}) {
		t.Errorf(".goreleaser.yaml targets %v x %v, want darwin, linux x amd64, arm64", bd.Goos, bd.Goarch)
	}
}
