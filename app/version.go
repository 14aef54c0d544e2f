package app

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/bulkload/bulkload/summary"
)

// ReadBuildInfo says which binary this is, from what the Go toolchain
// recorded in it (runtime/debug.ReadBuildInfo), never from a constant that
// someone must remember to bump.
func ReadBuildInfo() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	return buildInfoFrom(bi, ok)
}

// BuildInfo is summary.Build with the text `bulkload version` prints.
type BuildInfo summary.Build

// buildInfoFrom reads bi: the main module's version ("(devel)" for a build
// from a checkout, the tag for `go install ...@v1.2.3`), the VCS revision,
// commit time and modified flag (stamped by `go build` in a git checkout;
// absent from `go run` and `go test` builds), and the Go version. Go records
// no wall-clock build time (builds are reproducible): the commit time
// stands for it.
func buildInfoFrom(bi *debug.BuildInfo, ok bool) BuildInfo {
	b := BuildInfo{Version: "(unknown)", GoVersion: runtime.Version()}
	if !ok || bi == nil {
		return b
	}
	if bi.Main.Version != "" {
		b.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		b.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "-buildvcs":
			b.BuildVCS = s.Value
		}
	}
	return b
}

// String is the line `bulkload version` prints.
func (b BuildInfo) String() string {
	var rev string
	switch {
	case b.Revision != "":
	case b.BuildVCS == "false":
		rev = "revision unknown (built with -buildvcs=false, which leaves it out)"
	case b.Version != "(devel)" && b.Version != "(unknown)":
		rev = "revision unknown (a module build: the version names the source)"
	default:
		// What is seen is only that the binary holds no vcs.* stamp: Go
		// records neither -buildvcs=false (a GOFLAGS setting on many
		// build hosts) nor why it stamped nothing, so the line says what
		// leaves the stamp out instead of guessing which one did.
		rev = "revision unknown (this build has no VCS stamp: VCS stamping was off or found no git clone; " +
			"go run, go test, -buildvcs=false in the flags or GOFLAGS, and a git worktree leave it out; " +
			"GOFLAGS=-buildvcs=true go build in a git clone records it)"
	}
	if b.Revision != "" {
		rev = "revision " + b.Revision
		if b.Modified {
			rev += " (modified)"
		}
		if b.Time != "" {
			rev += ", committed " + b.Time
		}
	}
	return fmt.Sprintf("bulkload %s, %s, %s %s/%s", b.Version, rev, b.GoVersion, runtime.GOOS, runtime.GOARCH)
}
