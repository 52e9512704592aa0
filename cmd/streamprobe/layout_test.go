package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// layers ranks the project's packages as the README's project layout
// lists them: a package imports only packages of a lower rank. Leaves
// (rank 1) import nothing of the project.
var layers = map[string]int{
	"cmd/streamprobe":      10,
	"daemon":               9,
	"report":               9,
	"scorecard":            8,
	"internal/jobs":        7,
	"internal/builtin":     6,
	"internal/refserver":   5,
	"probe":                4,
	"dialect":              3,
	"resumeclient":         2,
	"internal/tokensource": 2,
	"internal/configsrc":   2,
	"textgate":             1,
	"config":               1,
	"internal/version":     1,
	"internal/metricnames": 1,
	"internal/neterr":      1,
	"internal/stats":       1,
}

const module = "github.com/streamprobe/streamprobe/"

// The binary links no test harness (internal/testenv), not
// net/http/httptest and none of the MCP server libraries the peers run
// (go-sdk, mark3labs/mcp-go), and every import of shipped code points down the
// README's layout: no arrow runs back up. A new package must be given its
// place in layers (and in the README) before this passes.
func TestBinaryLinksNoTestHarness(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "net/http/httptest" || strings.HasPrefix(p, module+"internal/testenv") {
			t.Errorf("the binary links %s", p)
		}
		// The MCP server libraries the peers run are test-only.
		if strings.HasPrefix(p, "github.com/mark3labs/") || strings.HasPrefix(p, "github.com/modelcontextprotocol/") {
			t.Errorf("the binary links the MCP peer library %s", p)
		}
	}
	out, err = exec.Command("go", "list", "-f", "{{if .GoFiles}}{{.ImportPath}} {{join .Imports \" \"}}{{end}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue // tests only (deploy, systemd)
		}
		from := strings.TrimPrefix(f[0], module)
		if strings.HasPrefix(from, "internal/testenv") || strings.HasPrefix(from, "bench/") {
			continue // harnesses and benchmarks: above everything, linked by no binary
		}
		rank, ok := layers[from]
		if !ok {
			t.Errorf("package %s has no place in the layout (layers, README)", from)
			continue
		}
		for _, imp := range f[1:] {
			to, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if strings.HasPrefix(to, "internal/testenv") {
				t.Errorf("%s imports the test harness %s", from, to)
			} else if r, ok := layers[to]; ok && r >= rank {
				t.Errorf("%s (rank %d) imports %s (rank %d): an arrow up the layout", from, rank, to, r)
			}
		}
	}
}

// .ci/run fuzzes every fuzz target of the repository, each in its own
// package (a target moved to another package, or a new one, is fuzzed
// where it is).
func TestCIFuzzesEveryTarget(t *testing.T) {
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(ci), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "fuzz" {
			listed[strings.TrimPrefix(f[1], "./")+" "+f[2]] = true
		}
	}
	found := 0
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			if err == nil {
				return filepath.SkipDir
			}
			return err
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllSubmatch(b, -1) {
			found++
			key := filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../../"))) + " " + string(m[1])
			if !listed[key] {
				t.Errorf(".ci/run does not fuzz %s", key)
			}
			delete(listed, key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range listed {
		t.Errorf(".ci/run fuzzes %s, which is no fuzz target", k)
	}
	if found == 0 {
		t.Fatal("no fuzz target found")
	}
}

var fuzzFunc = regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
