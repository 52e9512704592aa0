package main

import (
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/internal/version"
)

// Bare streamprobe prints the usage to stdout and exits 0; -v is
// --version.
func TestBareCommandAndVersionFlags(t *testing.T) {
	code, stdout, stderr := runCmd(t)
	if code != exitOK || stdout != usage || stderr != "" {
		t.Errorf("bare: exit %d, stdout %.60q, stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(usage, "'streamprobe' alone\nprints this text (exit 0)") || !strings.Contains(usage, "(also -v, --version)") {
		t.Error("the usage does not say what bare streamprobe and -v do")
	}
	for _, v := range []string{"-v", "--version", "-version", "version"} {
		code, stdout, stderr := runCmd(t, v)
		if code != exitOK || stdout != "streamprobe "+version.String()+"\n" || stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", v, code, stdout, stderr)
		}
	}
}

// run, validate, check and report without -config name the default path
// in their first line and in -h; with -config they do not.
func TestDefaultConfigNamed(t *testing.T) {
	note := "no -config given: reading the default " + defaultConfig
	cmds := []string{"validate"}
	if _, err := os.Stat(defaultConfig); err != nil {
		// else run would start the daemon on this host's config, check
		// probe its targets
		cmds = append(cmds, "run", "check", "report")
	}
	for _, cmd := range cmds {
		_, _, stderr := runCmd(t, cmd)
		if first, _, _ := strings.Cut(stderr, "\n"); first != "streamprobe "+cmd+": "+note {
			t.Errorf("%s: first line %q, want the default config named", cmd, first)
		}
	}
	for _, cmd := range []string{"run", "validate", "check", "report"} {
		_, help, _ := runCmd(t, cmd, "-h")
		if !strings.Contains(strings.Join(strings.Fields(help), " "), "Without -config it reads "+defaultConfig) {
			t.Errorf("%s -h does not name the default config:\n%s", cmd, help)
		}
		_, _, stderr := runCmd(t, cmd, "-config", "/nonexistent/probe.toml")
		if strings.Contains(stderr, note) {
			t.Errorf("%s -config FILE: %q", cmd, stderr)
		}
	}
}

// A listen address in use: one line with a hint, exit 1, and nothing
// started before it (the config's built-in target would log its start).
func TestRunListenAddressInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	cfg := writeConfig(t, "listen = \""+addr+"\"\n"+checkTargets)
	code, stdout, stderr := runCmd(t, "run", "-config", cfg)
	want := "streamprobe run: listen " + addr + ": address already in use (is another streamprobe running? or give listen another port)\n"
	if code != exitFail || stderr != want || stdout != "" {
		t.Errorf("exit %d, stdout %q\nstderr %q\nwant   %q", code, stdout, stderr, want)
	}
}

// VictoriaMetrics not there: one line, one prefix, the cause, the URL once
// in a hint, no encoded query; exit 2.
func TestReportVictoriaMetricsDown(t *testing.T) {
	cfg := writeConfig(t, checkTargets)
	code, stdout, stderr := runCmd(t, "report", "-config", cfg, "-vm", "http://127.0.0.1:1")
	want := "streamprobe report: victoriametrics query: connection refused (is VictoriaMetrics running at http://127.0.0.1:1?)\n"
	if code != exitUsage || stderr != want || stdout != "" {
		t.Errorf("exit %d, stdout %q\nstderr %q\nwant   %q", code, stdout, stderr, want)
	}
}

// check says what it is doing on stderr when stderr is not a terminal:
// one line per target/sample and target/drill as its runs finish; -q
// keeps it quiet. stdout is the card either way.
func TestCheckProgressLines(t *testing.T) {
	cfg := writeConfig(t, checkTargets)
	code, stdout, stderr := runCmd(t, "check", "-config", cfg, "-runs", "2")
	if code == exitUsage || !strings.Contains(stdout, "chat") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	line := regexp.MustCompile(`^streamprobe check: ((?:chat|events)/[a-z]+): ([12]) run\(s\), [0-9] failed \(([0-9]+)/8 runs done\)$`)
	var jobs []string
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	for i, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("stderr line %q is not a progress line:\n%s", l, stderr)
		}
		jobs = append(jobs, m[1])
		if i == len(lines)-1 && m[3] != "8" {
			t.Errorf("the last line says %s/8 runs done", m[3])
		}
	}
	slices.Sort(jobs)
	if want := []string{"chat/cancel", "chat/long", "chat/short", "events/drop", "events/stale"}; !slices.Equal(jobs, want) {
		t.Errorf("progress lines for %v, want one each for %v", jobs, want)
	}
	code, stdout2, stderr := runCmd(t, "check", "-config", cfg, "-runs", "2", "-q")
	if code == exitUsage || stderr != "" || !strings.Contains(stdout2, "chat") {
		t.Errorf("-q: exit %d, stderr %q", code, stderr)
	}
}
