package gosdk

import (
	"os/exec"
	"strings"
	"testing"
)

// The Go SDK is a test-only dependency: the streamprobe binary must not
// link it (nothing but _test files may import this package).
func TestBinaryDoesNotLinkTheSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/streamprobe/streamprobe/cmd/streamprobe").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "modelcontextprotocol") || strings.HasSuffix(pkg, "internal/testenv/mcppeer/gosdk") {
			t.Errorf("cmd/streamprobe depends on %s: the MCP Go SDK must stay test-only", pkg)
		}
	}
}
