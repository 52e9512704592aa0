package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/probe"
)

// once -dialect mcp against the built-in target's MCP server: a tool call
// measured, its progress the chunks.
func TestOnceMCPBuiltin(t *testing.T) {
	code, stdout, stderr := runCmd(t, "once", "-builtin", "-dialect", "mcp", "-tool", "progress", "-tool-args", `{"steps":3,"interval_ms":20}`, "-json")
	recs := decodeRecords(t, stdout)
	if code != exitOK || len(recs) != 1 {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if r := recs[0]; r.Outcome != probe.Success || r.Chunks != 4 || r.SessionMs == nil || r.Dialect != "mcp" {
		t.Errorf("record %+v", r)
	}
}

// Each fault of the reference MCP server gives its verdict through the
// binary, with exit 1 for a resume bug.
func TestOnceMCPVerdicts(t *testing.T) {
	for _, tc := range []struct {
		fault   refserver.MCPFault
		drill   string
		verdict probe.Verdict
		task    bool // 2026-07-28, the call made a task; else 2025-11-25
	}{
		{"", "drop", probe.VerdictPass, false},
		{"", "stale", probe.VerdictStaleOK, false},
		{refserver.MCPDuplicate, "duplicate", probe.VerdictDuplicate, false},
		{refserver.MCPGap, "drop", probe.VerdictMissed, false},
		{refserver.MCPRestart, "drop", probe.VerdictRestarted, false},
		{refserver.MCPCrossStream, "drop", probe.VerdictCrossStream, false},
		{refserver.MCPStaleLive, "stale", probe.VerdictUndefinedStale, false},
		{"", "drop", probe.VerdictPass, true},
		{"", "stale", probe.VerdictStaleOK, true},
		{refserver.MCPTaskCancelOwn, "drop", probe.VerdictTaskCancelled, true},
		{refserver.MCPTaskNoResult, "drop", probe.VerdictResultUnreachable, true},
		{refserver.MCPTaskLost, "drop", probe.VerdictTaskLost, true},
		{refserver.MCPTaskStaleLive, "stale", probe.VerdictUndefinedStale, true},
	} {
		m := refserver.NewMCP(tc.fault)
		hs := httptest.NewServer(m)
		args := []string{"-mcp-version", "2025-11-25", "-tool-args", `{"steps":12,"interval_ms":25}`}
		if tc.task {
			args = []string{"-task", "-away", "200ms", "-tool-args", `{"steps":4,"interval_ms":25,"task":true,"poll_ms":50}`}
		}
		code, stdout, stderr := runCmd(t, append([]string{"once", "-url", hs.URL + "/mcp", "-dialect", "mcp", "-drill", tc.drill, "-tool", "progress", "-json"}, args...)...)
		hs.CloseClientConnections()
		hs.Close()
		m.Close()
		recs := decodeRecords(t, stdout)
		want := exitOK
		if tc.verdict.Failed() {
			want = exitFail
		}
		if code != want || len(recs) != 1 || recs[0].Verdict != tc.verdict {
			t.Errorf("%s/%s: exit %d, want %d verdict %s: %s %s", tc.fault, tc.drill, code, want, tc.verdict, stdout, stderr)
		}
	}
}

func TestOnceMCPToolArgsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-dialect", "mcp", "-tool-args", `{"steps":`}, "-tool-args: not JSON: unexpected end of JSON input"},
		{[]string{"-dialect", "mcp", "-tool-args", `[1]`}, "-tool-args: want a JSON object"},
		{[]string{"-dialect", "sse", "-tool", "progress"}, "-tool, -tool-args and -task are for -dialect mcp (not sse)"},
	} {
		code, stdout, stderr := runCmd(t, append([]string{"once", "-url", "http://127.0.0.1:1/mcp"}, tc.args...)...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, "streamprobe once: "+tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

// check on a config with an MCP target prints its card, with the drill's
// verdict.
func TestCheckMCPCard(t *testing.T) {
	cfg := `[[target]]
name = "tools"
builtin = true
dialect = "mcp"
mcp_version = "2025-11-25"
samples = ["short", "cancel"]
drills = ["drop"]
[target.tool.short]
name = "progress"
args = '{"steps":4,"interval_ms":20}'
[target.tool.long]
args = '{"steps":10,"interval_ms":20}'
[target.tool.cancel]
args = '{"steps":10,"interval_ms":20}'
[budget.short]
tfc = "10s"
gap = "5s"
` + noStallBudget
	// 2 runs decide no p95: inconclusive, counted as a pass here (the
	// test is about the MCP card, not the verdict).
	code, stdout, stderr := runCmd(t, "check", "-config", writeConfig(t, cfg), "-runs", "2", "-inconclusive", "pass")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"target tools\n", "from Last-Event-ID: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	cfg = strings.Replace(cfg, `dialect = "mcp"`, `dialect = "sse"`, 1)
	code, _, stderr = runCmd(t, "check", "-config", writeConfig(t, cfg), "-runs", "1")
	if code != exitUsage || !strings.Contains(stderr, "tool calls are for the mcp dialect") {
		t.Errorf("tool on an sse target: exit %d %s", code, stderr)
	}
}
