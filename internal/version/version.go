// Package version is streamprobe's version: the one string that --version
// prints, the User-Agent carries, /healthz answers and
// streamprobe_build_info labels, and that build/package makes the .deb's
// version.
package version

import "runtime/debug"

// Version is set at build time with
// -ldflags "-X github.com/streamprobe/streamprobe/internal/version.Version=1.2.3"
// (build/package sets it to the .deb's version, so the two agree).
var Version = ""

// String returns the version: Version when set; else the module version
// (go install ...@v1.2.3); else the VCS revision the build embedded (12
// hex digits, "+dirty" when the tree had changes); else "dev".
func String() string {
	bi, _ := debug.ReadBuildInfo() // nil when the binary has none
	return from(Version, bi)
}

// from picks the version from what the build set and embedded.
func from(set string, bi *debug.BuildInfo) string {
	if set != "" {
		return set
	}
	if bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
