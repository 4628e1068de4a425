// Package version reports which build of Beet is running, from what the Go
// toolchain records in the binary (runtime/debug.ReadBuildInfo): the module
// version (set by `go install …@v1.2.0`), the VCS revision and commit time
// (set by `go build` inside a git checkout), and whether the tree had
// uncommitted changes. Release builds may override each with the linker:
//
//	go build -ldflags "-X github.com/beethq/beet/internal/version.Version=v1.2.0 \
//	  -X github.com/beethq/beet/internal/version.Commit=$(git rev-parse HEAD) \
//	  -X github.com/beethq/beet/internal/version.Date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" ./cmd/beet
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Set with -ldflags -X by release builds; empty means "ask the build info".
// Version stays "dev" in a plain build of a checkout, whose module version
// is "(devel)".
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// Info is the build's identity.
type Info struct {
	Version   string // v1.2.0, or dev
	Revision  string // full VCS commit hash, or ""
	Time      string // commit time, RFC 3339, or ""
	Modified  bool   // built from a tree with uncommitted changes
	GoVersion string
}

// Get returns the build's identity: ldflags first, then the build info.
var Get = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi)
})

// fromBuildInfo merges the ldflags values over what bi (nil if unknown)
// records. A plain build in a git checkout records a pseudo-version such
// as v0.0.0-20261125130012-ea63a67ebcf0; a tagged one its tag.
func fromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: Version, Revision: Commit, Time: Date, GoVersion: runtime.Version()}
	if bi == nil {
		return info
	}
	if info.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if info.Revision == "" {
				info.Revision = s.Value
			}
		case "vcs.time":
			if info.Time == "" {
				info.Time = s.Value
			}
		case "vcs.modified":
			info.Modified = s.Value == "true" && Commit == ""
		}
	}
	return info
}

// String returns "v1.2.0 (commit 0123456789ab, 2026-11-25T12:00:00Z)", with
// "-dirty" after a commit built with uncommitted changes, or just the
// version when nothing else is known.
func String() string { return format(Get()) }

func format(i Info) string {
	var extra []string
	if i.Revision != "" {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if i.Modified {
			rev += "-dirty"
		}
		extra = append(extra, "commit "+rev)
	}
	if i.Time != "" {
		extra = append(extra, i.Time)
	}
	if len(extra) == 0 {
		return i.Version
	}
	return i.Version + " (" + strings.Join(extra, ", ") + ")"
}
