// Package mcpgo runs github.com/mark3labs/mcp-go as a real MCP peer over
// loopback for the mcp dialect's tests: the library's StreamableHTTPServer
// with its InMemoryEventStore, task support, and the same `progress` tool
// as the SDK peers (package mcppeer), in two pinned versions: v1.2.1
// (2026-07-28, tasks) and v0.58.0 (2025-11-25).
//
// The server is the module in server/ (its own go.mod, so that neither
// version enters streamprobe's go.mod, whose go directive the library's
// would raise, and so that both versions can be pinned at once: go.mod
// holds v1.2.1, v058.mod v0.58.0, picked with go build -modfile). Start
// builds it once per version and source (cached under the temporary
// directory) and runs it as a child process, as nodepeer runs the npm
// peers: it exits when its stdin closes, and its log is at /log. Nothing
// of it reaches the streamprobe binary (cmd/streamprobe's layout test).
package mcpgo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
	"github.com/streamprobe/streamprobe/internal/testenv/nodepeer"
)

// The pinned versions.
const (
	V121 = "v1.2.1"
	V058 = "v0.58.0"
)

// modfiles names each version's go.mod in server/.
var modfiles = map[string]string{V121: "go.mod", V058: "v058.mod"}

// ServerDir is the folder of the peer's module.
func ServerDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "server")
}

// Start runs the mark3labs/mcp-go peer of the version (V121 or V058) for
// the test; cleanup stops it. Peer.URL is its endpoint (/mcp; ?store=0
// serves without an event store). Without the module's dependencies (no
// module proxy, no cache) the test is skipped, but under CI (CI=true),
// where .ci/run downloads them, it fails.
func Start(t testing.TB, version string) *mcppeer.Peer {
	t.Helper()
	bin := build(t, version)
	name := "mark3labs/mcp-go " + version
	base := nodepeer.Run(t, name, exec.Command(bin))
	return &mcppeer.Peer{Name: "mcp-go-" + version, URL: base + "/mcp", Log: func() ([]mcppeer.Exchange, error) { return mcppeer.GetLog(base + "/log") }}
}

var buildMu sync.Mutex

// build returns the peer's binary for version, building it when no binary
// of these sources is cached.
func build(t testing.TB, version string) string {
	t.Helper()
	modfile, ok := modfiles[version]
	if !ok {
		t.Fatalf("mcpgo: no version %q (V121, V058)", version)
	}
	dir := ServerDir()
	key, err := sourceKey(dir, modfile, version)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(os.TempDir(), "streamprobe-mcpgo", key, "server")
	buildMu.Lock()
	defer buildMu.Unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if out, err := goCmd(dir, "mod", "download", "-modfile="+modfile).CombinedOutput(); err != nil {
		msg := fmt.Sprintf("the mark3labs/mcp-go %s peer's modules (go mod download in %s): %v\n%s", version, dir, err, out)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid())
	if out, err := goCmd(dir, "build", "-modfile="+modfile, "-o", tmp, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the mark3labs/mcp-go %s peer: %v\n%s", version, err, out)
	}
	// Another test process may have built the same binary meanwhile: the
	// rename replaces it with an identical one.
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// goCmd is the go command in the peer's module, with the module files read
// only (a build never rewrites the pinned versions) and no workspace.
func goCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	return cmd
}

// sourceKey hashes what the binary is built from: the version's module
// file and sums, the Go sources and the toolchain. It also checks that the
// module file pins the version it is named for.
func sourceKey(dir, modfile, version string) (string, error) {
	mod, err := os.ReadFile(filepath.Join(dir, modfile))
	if err != nil {
		return "", err
	}
	if !strings.Contains(string(mod), "github.com/mark3labs/mcp-go "+version+"\n") {
		return "", fmt.Errorf("mcpgo: %s does not require github.com/mark3labs/mcp-go %s", filepath.Join(dir, modfile), version)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", runtime.Version(), version, mod)
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", err
	}
	files = append(files, filepath.Join(dir, strings.TrimSuffix(modfile, ".mod")+".sum"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	return version + "-" + hex.EncodeToString(h.Sum(nil))[:16], nil
}
