package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/beethq/beet", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-25T12:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for _, tc := range []struct {
		name                  string
		bi                    *debug.BuildInfo
		version, commit, date string // ldflags
		want                  string
	}{
		{"no build info", nil, "dev", "", "", "dev"},
		{"plain build outside git", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev", "", "", "dev"},
		{"go install of a tag, dirty tree", stamped, "dev", "", "", "v1.4.0 (commit 0123456789ab-dirty, 2026-11-25T12:00:00Z)"},
		{"ldflags win", stamped, "v2.0.0", "fedcba9876543210", "2027-01-01T00:00:00Z", "v2.0.0 (commit fedcba987654, 2027-01-01T00:00:00Z)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Version, Commit, Date = tc.version, tc.commit, tc.date
			defer func() { Version, Commit, Date = "dev", "", "" }()
			if got := format(fromBuildInfo(tc.bi)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
