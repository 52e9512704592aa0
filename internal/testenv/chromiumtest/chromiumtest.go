// Package chromiumtest runs Debian's Chromium headless for tests: a page's
// DOM after its scripts ran, or a screenshot. It is a test helper,
// internal to streamprobe.
package chromiumtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/tools"
)

// Timeout bounds one run of the browser.
const Timeout = 90 * time.Second

// Flags are the flags every run gets: headless, no sandbox (the tests run
// as root), no GPU, no QUIC, and nothing the browser would fetch or sync
// on its own. Run adds a fresh --user-data-dir.
var Flags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync"}

// Bin returns the Chromium binary, skipping the test when there is none,
// unless CI is set: then the test fails (.ci/run installs chromium).
func Bin(t testing.TB) string {
	t.Helper()
	return tools.Need(t, "chromium", "chromium", "chromium-browser")
}

// Run runs the browser with Flags, a fresh profile and args, and returns
// what it wrote to stdout. A failure, or a run longer than Timeout, fails
// the test with the browser's stderr.
func Run(t testing.TB, args ...string) []byte {
	t.Helper()
	out, _ := run(t, args...)
	return out
}

// run is Run, and what the browser wrote to stderr.
func run(t testing.TB, args ...string) (stdout, stderr []byte) {
	t.Helper()
	bin := Bin(t)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	all := append(append(append([]string(nil), Flags...), "--user-data-dir="+t.TempDir()), args...)
	cmd := exec.CommandContext(ctx, bin, all...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: did not finish within %v", err, Timeout)
		}
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes(), errb.Bytes()
}

// DumpDOM loads url and returns its DOM once the page's scripts ran.
func DumpDOM(t testing.TB, url string) string {
	t.Helper()
	return string(Run(t, "--dump-dom", url))
}

// DumpDOMConsole loads url and returns its DOM once the page's scripts
// ran, and every line the page wrote to the console (console.log, .error
// and the rest, and uncaught exceptions), as the browser logs them:
// `"text", source: URL (line)`.
func DumpDOMConsole(t testing.TB, url string) (dom string, console []string) {
	t.Helper()
	out, errb := run(t, "--enable-logging=stderr", "--v=0", "--dump-dom", url)
	for _, line := range strings.Split(string(errb), "\n") {
		if _, msg, ok := strings.Cut(line, ":CONSOLE"); ok {
			_, msg, _ = strings.Cut(msg, "] ")
			console = append(console, msg)
		}
	}
	return string(out), console
}

// Screenshot loads url in a window of width x height and returns the PNG
// of what it shows (no scrollbars). It fails the test unless the file is
// a PNG of at least minBytes.
func Screenshot(t testing.TB, url string, width, height, minBytes int) []byte {
	t.Helper()
	shot := filepath.Join(t.TempDir(), "shot.png")
	Run(t, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", width, height), "--hide-scrollbars", url)
	png, err := os.ReadFile(shot)
	if err != nil || len(png) < minBytes || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot of %s: %d bytes, %v; want a PNG of at least %d bytes", url, len(png), err, minBytes)
	}
	return png
}
