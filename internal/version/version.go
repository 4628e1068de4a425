// Package version reports which build of Beet is running. Release builds set
// the values with the linker:
//
//	go build -ldflags "-X github.com/beethq/beet/internal/version.Version=1.2.0 \
//	  -X github.com/beethq/beet/internal/version.Commit=$(git rev-parse --short HEAD)" ./cmd/beet
package version

import "runtime/debug"

// Version and Commit are set with -ldflags -X; they stay "dev" and "" in a
// plain go build, where Commit falls back to the VCS stamp Go records.
var (
	Version = "dev"
	Commit  = ""
)

// String returns "dev (commit abc1234)" or just the version when the commit
// is unknown.
func String() string {
	c := commit()
	if c == "" {
		return Version
	}
	return Version + " (commit " + c + ")"
}

func commit() string {
	if Commit != "" {
		return Commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}
