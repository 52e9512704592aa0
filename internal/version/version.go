// Package version is streamprobe's version: the one --version prints and
// the User-Agent carries.
package version

import "runtime/debug"

// Version is set at release build time with
// -ldflags "-X github.com/streamprobe/streamprobe/internal/version.Version=v1.2.3";
// when unset, the module version from the build info is used.
var Version = ""

// String returns the version, "dev" for a build from a work tree.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
