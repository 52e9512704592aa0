package main

import (
	"os/exec"
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
	"textgate":             1,
	"config":               1,
	"internal/version":     1,
	"internal/metricnames": 1,
	"internal/neterr":      1,
}

const module = "github.com/streamprobe/streamprobe/"

// The binary links no test harness (internal/testenv) and not
// net/http/httptest, and every import of shipped code points down the
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
