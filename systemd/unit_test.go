// Package systemd holds the unit file an operator installs; its test checks
// the unit with systemd's own tools.
package systemd

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/tools"
)

func analyze(t *testing.T) string {
	t.Helper()
	return tools.Need(t, "systemd", "systemd-analyze")
}

// unitForTest writes the unit with ExecStart pointing at a freshly built
// binary, since verify checks that the command exists.
func unitForTest(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "streamprobe")
	build := exec.Command("go", "build", "-o", bin, "../cmd/streamprobe")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	b, err := os.ReadFile("streamprobe.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(string(b), "/usr/local/bin/streamprobe", bin)
	path := filepath.Join(dir, "streamprobe.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUnitVerifies(t *testing.T) {
	sa := analyze(t)
	path := unitForTest(t)
	out, err := exec.Command(sa, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The unit must rate 2.5 or lower ("OK") in systemd's exposure score.
func TestUnitSecurityScore(t *testing.T) {
	sa := analyze(t)
	path := unitForTest(t)
	out, err := exec.Command(sa, "security", "--offline=yes", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for streamprobe\.service: ([0-9.]+) (\S+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no score in:\n%s", out)
	}
	score, _ := strconv.ParseFloat(m[1], 64)
	t.Logf("exposure %.1f %s", score, m[2])
	if score > 2.5 || m[2] != "OK" {
		t.Errorf("exposure %.1f %s, want 2.5 or lower (OK)", score, m[2])
	}
}

func TestUnitSettings(t *testing.T) {
	b, err := os.ReadFile("streamprobe.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DynamicUser=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
		"NoNewPrivileges=yes", "CapabilityBoundingSet=\n", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
		"SystemCallFilter=@system-service", "EnvironmentFile=-/etc/streamprobe/env", "-config /etc/streamprobe/probe.toml",
		"ExecReload=/bin/kill -HUP $MAINPID", "Restart=on-failure",
		"ExecStartPre=/usr/local/bin/streamprobe validate -config /etc/streamprobe/probe.toml"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("unit lacks %q", want)
		}
	}
}
