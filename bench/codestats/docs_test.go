package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layoutPackages returns the module's packages as the docs name them: a
// top-level folder (leadsim for leadsim/graph/..., bench for its tools),
// or two levels under cmd/ and internal/.
func layoutPackages(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "out") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
				return filepath.SkipDir // another module (deploy/)
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || !strings.Contains(rel, "/") {
			return nil
		}
		parts := strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/")
		name := parts[0]
		if (name == "cmd" || name == "internal") && len(parts) > 1 {
			name += "/" + parts[1]
		}
		seen[name] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for name := range seen {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// listedPackages returns the packages a list in prose names: each word of
// lower-case letters (and slashes) in backquotes. A flag (`--rate`), a type
// (`LeadInput`), a name with a dot (`token.Cache`) or a command
// (`bulkload report`) is none.
func listedPackages(text string) []string {
	re := regexp.MustCompile("`([a-z][a-z/]*)`")
	seen := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		seen[m[1]] = true
	}
	var out []string
	for name := range seen {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// section returns the text of doc from the line starting with start to the
// next line starting with end.
func section(t *testing.T, doc, start, end string) string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n"+start)
	if i < 0 {
		t.Fatalf("%s has no line starting %q", doc, start)
	}
	s = s[i+1:]
	if j := strings.Index(s[len(start):], "\n"+end); j >= 0 {
		s = s[:len(start)+j]
	}
	return s
}

// TestDocsNameEveryPackage: README.md's layout and docs/design.md's
// "Packages" name every package of the module, and no package that is
// gone (issue 30: they named runreport for a year after it was the HTML
// report, and missed metrics).
func TestDocsNameEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	want := layoutPackages(t, root)
	if !slices.Contains(want, "app") || !slices.Contains(want, "cmd/bulkload") {
		t.Fatalf("layoutPackages(%s) = %v: not the module's root", root, want)
	}
	for _, tc := range []struct{ doc, start, end string }{
		{"README.md", "- Layout", "- "},
		{filepath.Join("docs", "design.md"), "## Packages", "## "},
	} {
		got := listedPackages(section(t, filepath.Join(root, tc.doc), tc.start, tc.end))
		if !slices.Equal(got, want) {
			t.Errorf("%s %q names\n%v\nthe module's packages are\n%v", tc.doc, tc.start, got, want)
		}
	}
}

// TestListedPackages: what counts as a package named in a list.
func TestListedPackages(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"`app` (runs), `reader` (bytes to records), `samples`, `bench`.", []string{"app", "bench", "reader", "samples"}},
		{"`mapper` (records to `LeadInput`), `pace` (`--rate` (x))", []string{"mapper", "pace"}},
		{"`internal/pgtest` (a server) and `leadsim` imports none.", []string{"internal/pgtest", "leadsim"}},
		{"`token.Cache` (a type), `bulkload report` and `--resume`,", nil},
	}
	for _, tc := range tests {
		if got := listedPackages(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("listedPackages(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
