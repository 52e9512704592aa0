package tools

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const absent = "streamprobe-no-such-tool"

// A missing tool: outside CI the test is skipped and the summary names
// the tool, its package, the test and the install command; under CI the
// same test fails (run in a child process with CI=true).
func TestNeedSkipsAndSummarises(t *testing.T) {
	if os.Getenv("STREAMPROBE_TOOLS_CHILD") == "1" {
		Need(t, "no-such-package", absent)
		return
	}
	t.Setenv("CI", "")
	ran := t.Run("missing", func(t *testing.T) { Need(t, "no-such-package", absent) })
	if !ran {
		t.Fatal("the subtest failed outside CI")
	}
	s := Summary()
	for _, want := range []string{"testenv: skipped 1 test(s)", absent + " (no-such-package): TestNeedSkipsAndSummarises/missing", InstallCommand} {
		if !strings.Contains(s, want) {
			t.Errorf("summary %q lacks %q", s, want)
		}
	}
	if strings.Contains(s, "\n") {
		t.Errorf("summary is not one line: %q", s)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestNeedSkipsAndSummarises$", "-test.v")
	cmd.Env = append(os.Environ(), "CI=true", "STREAMPROBE_TOOLS_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "CI must run this test") {
		t.Errorf("under CI=true: %v\n%s", err, out)
	}
}

// A tool that is there is found, and nothing is recorded.
func TestNeedFindsAnInstalledTool(t *testing.T) {
	mu.Lock()
	before := len(skipped)
	mu.Unlock()
	if p := Need(t, "golang-go", "no-such-go", "go"); p == "" {
		t.Fatal("no path for go")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(skipped) != before {
		t.Error("an installed tool was recorded as skipped")
	}
}

// The install command's package list is .ci/run's, and the README gives
// that command.
func TestInstallCommandIsCIs(t *testing.T) {
	for _, f := range []struct{ path, want string }{
		{"../../../.ci/run", `apt_packages="` + AptPackages + `"`},
		{"../../../README.md", InstallCommand},
	} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), f.want) {
			t.Errorf("%s lacks %q", f.path, f.want)
		}
	}
}

func TestMain(m *testing.M) { os.Exit(M{m}.Run()) }
