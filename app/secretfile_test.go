package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretFileWarning(t *testing.T) {
	// The process: uid 65532 in groups 65532 and 2000, as a pod with
	// runAsUser, runAsGroup and fsGroup 65532.
	me := Identity{UID: 65532, Groups: []uint32{65532, 2000}}
	for _, tc := range []struct {
		name  string
		mode  fs.FileMode
		owner FileOwner
		want  string // a part of the warning; "" none
	}{
		{"own file, 0600", 0o600, FileOwner{65532, 65532, true}, ""},
		{"own file, 0400", 0o400, FileOwner{65532, 65532, true}, ""},
		{"own file, group-readable", 0o640, FileOwner{65532, 65532, true}, "chmod 600 it"},
		{"own file, world-readable", 0o644, FileOwner{65532, 65532, true}, "readable by every user of this machine (mode 0644): chmod 600 it"},
		{"own file, 0440", 0o440, FileOwner{65532, 65532, true}, "chmod 600 it"},
		// A Kubernetes Secret volume: root:fsGroup, defaultMode 0440.
		{"Kubernetes Secret, defaultMode 0440", 0o440, FileOwner{0, 65532, true}, ""},
		{"another's file, read through a supplementary group", 0o640, FileOwner{0, 2000, true}, ""},
		{"Secret with defaultMode 0444", 0o444, FileOwner{0, 65532, true}, "(mode 0444, owner uid 0): have its owner make it readable only"},
		{"another's file, world-readable, our group", 0o644, FileOwner{0, 65532, true}, "readable by every user"},
		{"another's file, a group we are not in", 0o640, FileOwner{0, 3000, true}, "readable by the group 3000 (mode 0640, owner uid 0), which the user running bulkload (uid 65532) is not in"},
		{"another's file, 0600 (read as root, say)", 0o600, FileOwner{0, 0, true}, ""},
		{"unknown owner, group-readable", 0o640, FileOwner{}, "chmod 600 it"},
		{"unknown owner, 0600", 0o600, FileOwner{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SecretFileWarning("--client-secret-file", "/s", tc.mode, tc.owner, me)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("SecretFileWarning(%04o, %+v) = %q, want %q", tc.mode, tc.owner, got, tc.want)
			}
		})
	}
}

// TestOwnerOfAndProcessIdentity: a file this process creates is owned by
// its effective user, and its group is one of the process's groups, so an
// own 0440 file still warns and the rule sees what the kernel sees.
func TestOwnerOfAndProcessIdentity(t *testing.T) {
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("s"), 0o440); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	owner, me := OwnerOf(st), ProcessIdentity()
	if !owner.Known || owner.UID != me.UID {
		t.Fatalf("OwnerOf(own file) = %+v, ProcessIdentity() = %+v: want the same user", owner, me)
	}
	if w := SecretFileWarning("--client-secret-file", p, st.Mode(), owner, me); !strings.Contains(w, "chmod 600") {
		t.Errorf("own 0440 file: warning %q, want chmod 600", w)
	}
}
