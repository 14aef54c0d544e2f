package outfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SummaryPath is the summary beside the results file at path:
// path + ".summary.json" (package summary writes and reads it).
func SummaryPath(path string) string { return path + ".summary.json" }

// Sidecar is a file a run keeps beside its results file.
type Sidecar struct {
	Path string
	// What says what it is, for a refusal: "meta file (the identity of
	// its input, which --resume checks)".
	What string
}

// Sidecars are the files a run keeps beside the results file at path, by
// name: the meta file (MetaPath), the lock (LockPath) and the summary
// (SummaryPath). Their temporary files, and the results file's own, are
// Temporary's. Whatever a run adds beside its results file is added here,
// so that CheckOutputs protects it.
func Sidecars(path string) []Sidecar {
	return []Sidecar{
		{MetaPath(path), "meta file (the identity of its input, which --resume checks)"},
		{LockPath(path), "lock file (it keeps a second run off the results file)"},
		{SummaryPath(path), "summary (bulkload report and bulkload summary read it)"},
	}
}

// CompactPattern is the pattern of os.CreateTemp for the compacted copy of
// the results file named base (report's Compact): hidden, beside it, and
// known to Temporary.
func CompactPattern(base string) string { return "." + base + ".compact-*" }

// Temporary reports whether path names a temporary file of the output at
// of: Create's ".BASE.tmp-*" or a compaction's ".BASE.compact-*" in of's
// directory. A run removes its temporaries or renames them over of; an
// output by such a name would be lost, or would take of's place.
func Temporary(path, of string) bool {
	dir, base := filepath.Split(path)
	odir, obase := filepath.Split(of)
	if !sameDir(dir, odir) {
		return false
	}
	return strings.HasPrefix(base, "."+obase+".tmp-") || strings.HasPrefix(base, "."+obase+".compact-")
}

// sameDir reports whether two directories (as filepath.Split gives them,
// "" for the current one) are one.
func sameDir(a, b string) bool {
	a, b = filepath.Clean("./"+a), filepath.Clean("./"+b)
	if a == b {
		return true
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == ab {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// sidecarOf says what path is to the results file at results: one of its
// Sidecars, a temporary file of it or of a sidecar; "" for none.
func sidecarOf(path, results string) string {
	for _, s := range Sidecars(results) {
		if samePath(path, s.Path) {
			return fmt.Sprintf("the %s of the results file %s", s.What, results)
		}
		if Temporary(path, s.Path) {
			return fmt.Sprintf("a temporary name of the %s of the results file %s", s.What, results)
		}
	}
	if Temporary(path, results) {
		return fmt.Sprintf("a temporary name of the results file %s (it is renamed over it)", results)
	}
	return ""
}

// existingSidecar says what path is when it names a sidecar of a results
// file that exists (another run's), the input excepted: "" when it does
// not.
func existingSidecar(path string, input os.FileInfo) string {
	for _, suffix := range []string{MetaPath(""), LockPath(""), SummaryPath("")} {
		results, ok := strings.CutSuffix(path, suffix)
		if !ok || results == "" || strings.HasSuffix(results, string(filepath.Separator)) {
			continue
		}
		if st, err := os.Stat(results); err == nil && st.Mode().IsRegular() && (input == nil || !os.SameFile(st, input)) {
			return sidecarOf(path, results)
		}
	}
	return ""
}

// samePath reports whether a and b name one file: the same absolute path,
// or, when both exist, the same file.
func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == ab {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// RemoveStale removes the temporary files of the output at path (Create's
// ".BASE.tmp-*" beside it) that a process killed while writing left
// behind: they may hold a lead's data (a rejects file's rows), and nothing
// else reads them. The caller holds the results file's lock, so no run of
// it is writing them; another run writing the same output path at once
// would lose its file (and say so). Only regular files of the running
// user's are removed. It returns the names removed.
func RemoveStale(path string) []string {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return nil
	}
	quoted := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(base)
	stale, _ := filepath.Glob(filepath.Join(dir, "."+quoted+".tmp-*"))
	var removed []string
	for _, p := range stale {
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() || owned(p, st) != nil {
			continue
		}
		if os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}
