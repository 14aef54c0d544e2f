package app

import (
	"fmt"
	"io/fs"
	"slices"
)

// Identity is who a process is to the file system: its effective user id
// and every group it holds (the effective group and the supplementary
// ones).
type Identity struct {
	UID    uint32
	Groups []uint32
}

// FileOwner is a file's owning user and group; Known is false where the
// platform does not say.
type FileOwner struct {
	UID, GID uint32
	Known    bool
}

// SecretFileWarning says who besides the process running bulkload can read
// the secret file at path, and what to do, or "" when nobody else can. A
// file readable by every user always warns. A file readable by its group
// warns when the process owns it (it can chmod 600 it) or is not in that
// group, but not when the file belongs to another user and the process
// reads it through its group: that is how a Kubernetes Secret volume with
// defaultMode 0440 and the pod's fsGroup is mounted (root:fsGroup, 0440),
// where nothing can be changed and a warning every run would only teach
// operators to ignore it.
func SecretFileWarning(flag, path string, mode fs.FileMode, owner FileOwner, me Identity) string {
	perm := mode.Perm()
	if perm&0o077 == 0 {
		return ""
	}
	mine := !owner.Known || owner.UID == me.UID
	switch {
	case perm&0o007 != 0 && mine:
		return fmt.Sprintf("%s %s is readable by every user of this machine (mode %04o): chmod 600 it", flag, path, perm)
	case perm&0o007 != 0:
		return fmt.Sprintf("%s %s is readable by every user of this machine (mode %04o, owner uid %d): have its owner make it readable only by the user or group that runs bulkload (chmod o-rwx)", flag, path, perm, owner.UID)
	case mine:
		return fmt.Sprintf("%s %s is readable by others than its owner (mode %04o): chmod 600 it", flag, path, perm)
	case slices.Contains(me.Groups, owner.GID):
		// Another user's file that this process reads through its group.
		return ""
	default:
		return fmt.Sprintf("%s %s is readable by the group %d (mode %04o, owner uid %d), which the user running bulkload (uid %d) is not in: have its owner make it readable only by that user or its group", flag, path, owner.GID, perm, owner.UID, me.UID)
	}
}
