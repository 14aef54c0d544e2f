package app

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxSettingsFile bounds what is read of a settings file: a config, a
// mapping or a secret is a few KiB.
const maxSettingsFile = 4 << 20

// OpenSetting opens a settings file (--config, --mapping,
// --client-secret-file) for reading. Only a regular file is accepted (a
// link to one is followed, as Kubernetes mounts secrets): a FIFO with no
// writer would block the open and then the read beyond the reach of
// SIGINT and SIGTERM, and a device could be read for ever. The open does
// not wait on a FIFO (openNoWait). flag names the setting in the error,
// which is a usage error. The caller closes the file.
func OpenSetting(flag, path string) (*os.File, error) {
	f, err := openNoWait(path)
	if err != nil {
		return nil, UsageErrorf("%s: %v", flag, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, UsageErrorf("%s: %v", flag, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, UsageErrorf("%s %s is %s, not a regular file: settings are read only from regular files (a pipe with no writer would wait for ever); save it to a file", flag, path, fileKind(st.Mode()))
	}
	return f, nil
}

// ReadSetting reads a whole settings file through openSetting, at most
// maxSettingsFile bytes.
func ReadSetting(flag, path string) ([]byte, fs.FileInfo, error) {
	f, err := OpenSetting(flag, path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, UsageErrorf("%s: %v", flag, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSettingsFile+1))
	if err != nil {
		return nil, nil, UsageErrorf("%s: %v", flag, err)
	}
	if len(b) > maxSettingsFile {
		return nil, nil, UsageErrorf("%s %s is larger than %d MiB: not a settings file", flag, path, maxSettingsFile>>20)
	}
	return b, st, nil
}

// fileKind names what a non-regular file is, for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return fmt.Sprintf("a %v", m.Type())
}
