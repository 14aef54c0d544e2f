//go:build unix

package app

import (
	"os"
	"syscall"
)

// openNoWait opens path for reading without waiting for a FIFO's writer
// (O_NONBLOCK; it does nothing to a regular file's reads).
func openNoWait(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// OwnerOf returns the owner of the file st describes.
func OwnerOf(st os.FileInfo) FileOwner {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return FileOwner{UID: s.Uid, GID: s.Gid, Known: true}
	}
	return FileOwner{}
}

// ProcessIdentity is the running process's effective user and groups.
func ProcessIdentity() Identity {
	id := Identity{UID: uint32(os.Geteuid()), Groups: []uint32{uint32(os.Getegid())}}
	groups, _ := os.Getgroups()
	for _, g := range groups {
		id.Groups = append(id.Groups, uint32(g))
	}
	return id
}
