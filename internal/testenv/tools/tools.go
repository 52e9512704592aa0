// Package tools is how a test finds a third-party tool it runs against
// (VictoriaMetrics, vmagent, vmalert, promtool, systemd-analyze, Chromium,
// nginx): under CI (CI set) a missing tool fails the test, since .ci/run
// installs every one; elsewhere the test is skipped, and the package's
// TestMain (Main) prints one summary line of what was skipped and why,
// with the command that installs the tools, so that a local green is not
// mistaken for CI's.
package tools

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// AptPackages are the Debian packages .ci/run installs for the tests'
// third-party tools (TestInstallCommandIsCIs keeps the three lists equal:
// here, .ci/run and the README).
const AptPackages = "victoria-metrics prometheus systemd chromium nginx-light logrotate redis-server"

// InstallCommand installs every tool a test may need.
const InstallCommand = "sudo apt-get install --no-install-recommends " + AptPackages

// skipped are the tests skipped for a missing tool: tool (package) ->
// test names.
var (
	mu      sync.Mutex
	skipped = map[string][]string{}
)

// Need returns the path of the first of bins found (a name looked up in
// PATH, or a path), a tool of the Debian package pkg. When none is there
// the test fails under CI, and is skipped (and recorded for M's summary)
// elsewhere; the first of bins names the tool.
func Need(t testing.TB, pkg string, bins ...string) string {
	t.Helper()
	for _, b := range bins {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	bin := bins[0]
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed, and CI must run this test (.ci/run installs the Debian package %s)", bin, pkg)
	}
	mu.Lock()
	key := bin + " (" + pkg + ")"
	skipped[key] = append(skipped[key], t.Name())
	mu.Unlock()
	t.Skipf("%s not installed (apt-get install %s); .ci/run installs it", bin, pkg)
	return ""
}

// Summary is the one line that says which tests were skipped for which
// missing tool, and how to install them; "" when none was.
func Summary() string {
	mu.Lock()
	defer mu.Unlock()
	if len(skipped) == 0 {
		return ""
	}
	keys := make([]string, 0, len(skipped))
	n := 0
	for k, tests := range skipped {
		keys = append(keys, fmt.Sprintf("%s: %s", k, strings.Join(tests, ", ")))
		n += len(tests)
	}
	slices.Sort(keys)
	return fmt.Sprintf("testenv: skipped %d test(s), tools not installed: %s; install them with `%s` (CI=true fails instead of skipping)",
		n, strings.Join(keys, "; "), InstallCommand)
}

// M is a package's tests whose Run prints Summary's line, if any, on
// stdout after them (go test shows it with -v, on a failing package, or
// for a package run in its directory). TestMain calls
// os.Exit(tools.M{m}.Run()), or hands tools.M{m} to goleak.VerifyTestMain.
type M struct{ *testing.M }

// Run runs the tests, then writes the summary; it returns the tests' code.
func (m M) Run() int { return run(m.M.Run, os.Stdout) }

func run(tests func() int, w io.Writer) int {
	code := tests()
	if s := Summary(); s != "" {
		fmt.Fprintln(w, s)
	}
	return code
}
