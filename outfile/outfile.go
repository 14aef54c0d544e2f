// Package outfile owns the files a run writes, as files: how each output
// reaches the disk, the files that sit beside the results file, and the
// check that every output can be written before a run reads or sends
// anything. What goes into the results file (its columns, codecs, journal
// and resume state) is package report's.
//
//   - Creating outputs (this file): results, rejects, the summary JSON, the
//     metrics file, reports.
//   - The results file's lock (Lock, LockPath): NAME.lock, which keeps a
//     second run off a results file.
//   - The meta sidecar (Meta, ReadMeta, WriteMeta): NAME.meta, the identity
//     of the input a results file belongs to, which --resume checks.
//   - The output probes (CheckOutputs): before a run, every output it will
//     write is proven writable, distinct from the input and the other
//     outputs, and not a file holding an upload's outcomes.
//
// Every output is a file the run creates itself, its mode set at creation,
// never an existing path opened for writing: in a shared runs directory a
// planted symbolic link would aim the write at another file, and another
// user's pre-created file (mode 0666) would receive a lead's SSN while
// staying theirs. So a new output is written to a temporary file in the
// same directory (O_EXCL, mode perm) and renamed over the path: the rename
// replaces a link or a foreign file's name, never its contents. A file a
// run continues (--resume, the lock file) is opened with O_NOFOLLOW and
// used only when it is a regular file owned by the running user.
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotOwned is wrapped by the errors of OpenOwned and Check when a path
// is not a regular file of the running user's: a symbolic link, a device,
// a FIFO, or a file of another user.
var ErrNotOwned = errors.New("not a regular file owned by the running user")

// File is a new output being written: a hidden temporary file beside its
// path until Commit renames it there. The caller calls Commit or Abort
// (Abort after Commit does nothing, so `defer f.Abort()` is safe). It is
// not safe for concurrent use.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts a new output that will be path: a temporary file
// ".BASE.tmp-*" in path's directory, created exclusively, with mode perm
// exactly (whatever the umask). Nothing exists at path until Commit.
func Create(path string, perm fs.FileMode) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return nil, fmt.Errorf("create %s: not a file name", path)
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("create %s: set mode %v: %w", path, perm, err)
	}
	return &File{File: tmp, path: path}, nil
}

// Path is where Commit puts the file.
func (f *File) Path() string { return f.path }

// Commit syncs and closes the file and renames it to its path, replacing
// what was there (a symbolic link itself, not its target). On failure the
// temporary file is removed and path is left as it was.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("write %s: already committed or aborted", f.path)
	}
	f.done = true
	err := errors.Join(f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	syncDir(filepath.Dir(f.path))
	return nil
}

// Abort closes and removes the temporary file; path is left as it was. It
// does nothing after Commit or an earlier Abort.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// Write writes data to path as a new file with mode perm (Create, Write,
// Commit): a reader of path sees the old file or the new one, whole.
func Write(path string, perm fs.FileMode, data []byte) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.File.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// Replace creates a new, empty file with mode perm and renames it to path
// at once, returning it open for reading and writing: for an output that
// grows while the run goes on and must be at its path from the start (the
// results journal, the rejects file). The caller closes it.
func Replace(path string, perm fs.FileMode) (*os.File, error) {
	f, err := Create(path, perm)
	if err != nil {
		return nil, err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		f.Abort()
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	f.done = true
	syncDir(filepath.Dir(path))
	return f.File, nil
}

// OpenOwned opens an existing file a run continues in place (a results
// file to resume, the lock file) with flag, never following a symbolic
// link and never waiting on a FIFO; with os.O_CREATE in flag a missing file
// is created with mode perm. The file must be a regular file owned by the
// running user, with no other hard link (else the error wraps
// ErrNotOwned); a mode wider than perm
// is narrowed to perm. The caller closes it.
func OpenOwned(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := openNoFollow(path, flag, perm)
	if err != nil {
		if isLoop(err) {
			return nil, fmt.Errorf("open %s: %w: it is a symbolic link", path, ErrNotOwned)
		}
		// os.OpenFile's *PathError already says "open PATH: ...".
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = owned(path, st)
	}
	if err == nil && links(st) > 1 {
		// A hard link planted in a shared directory names a file kept
		// elsewhere (a system file, for a run as root).
		err = fmt.Errorf("%s: %w: it has %d hard links; remove the others or choose another path", path, ErrNotOwned, links(st))
	}
	if err == nil && st.Mode().Perm()&^perm != 0 {
		err = f.Chmod(st.Mode().Perm() & perm)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Check says whether path may become an output of this run, before
// anything is written: nothing there, or a regular file of the running
// user's (not a symbolic link, not another user's file: the error wraps
// ErrNotOwned), in a directory where a new file can be created. It returns
// the existing file's info, or nil when there is none.
func Check(path string) (fs.FileInfo, error) {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		info = nil
	case err != nil:
		return nil, err
	case info.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return info, fmt.Errorf("%w: it is a symbolic link (to %s); outputs are written only as new files: name the target itself, or remove the link", ErrNotOwned, target)
	default:
		if err := owned(path, info); err != nil {
			return info, err
		}
	}
	f, err := Create(path, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return info, fmt.Errorf("directory %s does not exist", filepath.Dir(path))
		}
		return info, err
	}
	f.Abort()
	return info, nil
}

// syncDir makes a rename in dir durable. It is best effort: some file
// systems cannot sync a directory, and the rename has happened either way.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
