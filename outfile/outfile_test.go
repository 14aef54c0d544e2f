//go:build unix

package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteNeverTouchesWhatIsThere plants, at the output's path, a link
// to a victim file, another user's pre-created 0666 file, and a hard link:
// Write replaces the name and leaves each planted file's contents alone,
// and the new file has the mode asked for, whatever the umask.
func TestWriteNeverTouchesWhatIsThere(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, path, victim string)
	}{
		{"nothing", func(*testing.T, string, string) {}},
		{"symlink", func(t *testing.T, path, victim string) { must(t, os.Symlink(victim, path)) }},
		{"dangling symlink", func(t *testing.T, path, victim string) {
			must(t, os.Remove(victim))
			must(t, os.Symlink(victim, path))
		}},
		{"hard link", func(t *testing.T, path, victim string) { must(t, os.Link(victim, path)) }},
		{"pre-created 0666", func(t *testing.T, path, victim string) {
			must(t, os.Rename(victim, path))
			must(t, os.Link(path, victim)) // the planter keeps a name for it
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(dir, "victim")
			must(t, os.WriteFile(victim, []byte("victim\n"), 0o666))
			path := filepath.Join(dir, "out.rejects.csv")
			tc.plant(t, path, victim)
			if err := Write(path, 0o600, []byte("ssn\n")); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if b, err := os.ReadFile(victim); err == nil && string(b) != "victim\n" {
				t.Errorf("victim now holds %q, want it untouched", b)
			} else if err != nil && tc.name != "dangling symlink" {
				t.Errorf("victim: %v", err)
			}
			if _, err := os.Stat(victim); tc.name == "dangling symlink" && err == nil {
				t.Errorf("Write created the dangling link's target")
			}
			st, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
				t.Errorf("%s is %v, want a regular file with mode 0600", path, st.Mode())
			}
			if b, _ := os.ReadFile(path); string(b) != "ssn\n" {
				t.Errorf("%s holds %q", path, b)
			}
			assertNoTemp(t, dir)
		})
	}
}

// TestReplaceIsNewAtOnce: Replace puts a new empty file at path at once,
// open for writing, and the file it replaced keeps its contents.
func TestReplaceIsNewAtOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.csv")
	victim := filepath.Join(dir, "victim")
	must(t, os.WriteFile(victim, []byte("victim\n"), 0o644))
	must(t, os.Symlink(victim, path))
	f, err := Replace(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("row\n"); err != nil {
		t.Fatal(err)
	}
	must(t, f.Close())
	if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
		t.Errorf("victim holds %q", b)
	}
	if b, _ := os.ReadFile(path); string(b) != "row\n" {
		t.Errorf("%s holds %q", path, b)
	}
	if st, _ := os.Lstat(path); st.Mode() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode())
	}
	assertNoTemp(t, dir)
}

func TestOpenOwned(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own")
	must(t, os.WriteFile(own, []byte("x"), 0o666))
	must(t, os.Chmod(own, 0o666))
	f, err := OpenOwned(own, os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("OpenOwned(own file): %v", err)
	}
	f.Close()
	if st, _ := os.Stat(own); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after OpenOwned, want narrowed to 0600", st.Mode().Perm())
	}
	created := filepath.Join(dir, "new.lock")
	f, err = OpenOwned(created, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("OpenOwned(O_CREATE): %v", err)
	}
	f.Close()

	link := filepath.Join(dir, "link")
	must(t, os.Symlink(own, link))
	hard := filepath.Join(dir, "hard")
	must(t, os.Link(own, hard))
	fifo := filepath.Join(dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	refused := []string{link, hard, fifo, dir}
	if os.Geteuid() == 0 {
		foreign := filepath.Join(dir, "foreign")
		must(t, os.WriteFile(foreign, nil, 0o666))
		must(t, os.Chown(foreign, 65534, 65534))
		refused = append(refused, foreign)
	}
	for _, p := range refused {
		f, err := OpenOwned(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err == nil {
			f.Close()
			t.Errorf("OpenOwned(%s) succeeded, want it refused", filepath.Base(p))
		} else if p != dir && !errors.Is(err, ErrNotOwned) {
			t.Errorf("OpenOwned(%s) = %v, want ErrNotOwned", filepath.Base(p), err)
		}
	}
}

// TestOwnedForeign checks the owner test itself with a file info of another
// user, for a test run that cannot chown.
func TestOwnedForeign(t *testing.T) {
	st := fakeInfo{sys: &syscall.Stat_t{Uid: uint32(os.Geteuid() + 1), Nlink: 1}}
	if err := owned("x", st); !errors.Is(err, ErrNotOwned) {
		t.Errorf("owned(another user's file) = %v, want ErrNotOwned", err)
	}
	st.sys.Uid = uint32(os.Geteuid())
	if err := owned("x", st); err != nil {
		t.Errorf("owned(own file) = %v", err)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own")
	must(t, os.WriteFile(own, nil, 0o600))
	link := filepath.Join(dir, "link")
	must(t, os.Symlink(own, link))
	for _, tc := range []struct {
		path   string
		exists bool
		ok     bool
	}{
		{filepath.Join(dir, "new"), false, true},
		{own, true, true},
		{link, true, false},
		{filepath.Join(dir, "missing", "x"), false, false},
	} {
		info, err := Check(tc.path)
		if (err == nil) != tc.ok || (info != nil) != tc.exists {
			t.Errorf("Check(%s) = %v, %v; want ok %v, exists %v", tc.path, info, err, tc.ok, tc.exists)
		}
	}
	assertNoTemp(t, dir)
}

type fakeInfo struct {
	fs.FileInfo
	sys *syscall.Stat_t
}

func (f fakeInfo) Mode() fs.FileMode { return 0o600 }
func (f fakeInfo) Sys() any          { return f.sys }

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRemoveStale: the temporary files a killed writer left beside an
// output go; the output itself, other files and another output's
// temporary files stay.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "rej.csv")
	keep := []string{out, filepath.Join(dir, ".rej.csv.meta.tmp-1"), filepath.Join(dir, ".other.csv.tmp-2"), filepath.Join(dir, "rej.csv.tmp-3")}
	stale := []string{filepath.Join(dir, ".rej.csv.tmp-123"), filepath.Join(dir, ".rej.csv.tmp-9")}
	for _, p := range append(append([]string{}, keep...), stale...) {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := RemoveStale(out); len(got) != len(stale) {
		t.Errorf("RemoveStale removed %v, want %v", got, stale)
	}
	for _, p := range stale {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range keep {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
}
