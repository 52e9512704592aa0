package version

import (
	"runtime/debug"
	"testing"
)

// One rule, in its order: what the build set, the module version, the VCS
// revision, dev.
func TestFrom(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name, set string
		bi        *debug.BuildInfo
		want      string
	}{
		{"set by build/package", "0.0.0~git4a80c38", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("4a80c38aaaaaaaaaaaaa", "false")}, "0.0.0~git4a80c38"},
		{"go install @version", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"work tree, clean", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("4a80c38aaaaaaaaaaaaa", "false")}, "4a80c38aaaaa"},
		{"work tree, modified", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("4a80c38aaaaaaaaaaaaa", "true")}, "4a80c38aaaaa+dirty"},
		{"no VCS", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"no build info", "", nil, "dev"},
	} {
		if got := from(tc.set, tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
