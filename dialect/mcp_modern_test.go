package dialect_test

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/gosdk"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/mcpgo"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

// The mcp dialect on 2026-07-28 against the real libraries that serve it
// (their behaviours pinned on the wire by internal/testenv/mcppeer's
// modern_test.go and tasks_test.go, listed in docs/mcp-peers.md).

// modernPeers runs f against each 2026-07-28 server, in parallel.
func modernPeers(t *testing.T, f func(t *testing.T, p *mcppeer.Peer)) {
	for name, start := range map[string]func(testing.TB) *mcppeer.Peer{
		"typescript-sdk-v2": mcppeer.StartTS2,
		"go-sdk-stateless":  gosdk.StartStateless,
		"mcp-go-v1.2.1":     func(t testing.TB) *mcppeer.Peer { return mcpgo.Start(t, mcpgo.V121) },
	} {
		t.Run(name, func(t *testing.T) { t.Parallel(); f(t, start(t)) })
	}
}

// A plain call: server/discover finds 2026-07-28, the call goes with its
// _meta and headers and no session, and is measured as on 2025: TFC the
// first progress, the end the result. No initialize, no DELETE.
func TestMCPModernCall(t *testing.T) {
	modernPeers(t, func(t *testing.T, p *mcppeer.Peer) {
		res := runPeer(t, p, "", "short", `{"steps":4,"interval_ms":40}`, probe.Drill{}, reftest.RunDeadline)
		rec := res.Record
		// mcp-go v1.2.1 often loses the last progress notification
		// (streamable_http.go:828-836): 4 or 5 chunks there.
		if rec.Outcome != probe.Success || rec.ProtocolVersion != "2026-07-28" || rec.Chunks < 4 || rec.Chunks > 5 || rec.TFCMs == nil || rec.EndMs == nil || rec.SessionMs == nil {
			t.Fatalf("outcome %s (%s) version %q chunks %d; record %+v", rec.Outcome, rec.Error, rec.ProtocolVersion, rec.Chunks, rec)
		}
		var methods []string
		for _, ex := range peerLog(t, p) {
			methods = append(methods, ex.Method+" "+ex.RPC)
			if ex.Method == "POST" && (ex.ProtocolVersion != "2026-07-28" || ex.MCPMethod != ex.RPC || ex.Session != "") {
				t.Errorf("%s: MCP-Protocol-Version %q, Mcp-Method %q, session %q", ex.RPC, ex.ProtocolVersion, ex.MCPMethod, ex.Session)
			}
			if ex.RPC == "tools/call" && ex.MCPName != mcppeer.Tool {
				t.Errorf("tools/call: Mcp-Name %q", ex.MCPName)
			}
		}
		if got := strings.Join(methods, ", "); !strings.HasPrefix(got, "POST server/discover, POST tools/call") || strings.Contains(got, "initialize") || strings.Contains(got, "DELETE") || strings.Contains(got, "GET") {
			t.Errorf("requests: %s", got)
		}
	})
}

// A drop drill on a plain 2026-07-28 call: the stream has no ids and no
// GET, so nothing can resume it; the drill does not drop it, measures the
// call whole and says not_supported, naming why. Not a failure.
func TestMCPModernDropIsNotSupported(t *testing.T) {
	modernPeers(t, func(t *testing.T, p *mcppeer.Peer) {
		rec := runPeer(t, p, "", "long", `{"steps":6,"interval_ms":30}`, probe.Drill{Name: probe.DrillDrop, OpaqueIDs: true}, reftest.RunDeadline).Record
		if rec.Outcome != probe.Success || rec.Verdict != probe.VerdictNotSupported || rec.Verdict.Failed() || rec.Resumed ||
			!strings.Contains(rec.ResumeDetail, "cannot be resumed") || !strings.Contains(rec.ResumeDetail, "made no task") {
			t.Fatalf("outcome %s (%s) verdict %s resumed %v; detail %q", rec.Outcome, rec.Error, rec.Verdict, rec.Resumed, rec.ResumeDetail)
		}
	})
}

// The cancel sample on 2026-07-28 closes the call's stream, which is its
// cancel: no notifications/cancelled is sent.
func TestMCPModernCancelCloses(t *testing.T) {
	modernPeers(t, func(t *testing.T, p *mcppeer.Peer) {
		rec := runPeer(t, p, "", "cancel", `{"steps":40,"interval_ms":30}`, probe.Drill{}, reftest.RunDeadline).Record
		if rec.Outcome != probe.ClientCancelled || !rec.Intended() || strings.Contains(rec.Error, "cancel message") {
			t.Fatalf("outcome %s (%s)", rec.Outcome, rec.Error)
		}
		for _, ex := range peerLog(t, p) {
			if ex.RPC == "notifications/cancelled" {
				t.Errorf("a notifications/cancelled was sent on 2026-07-28")
			}
		}
	})
}

// A 2025 server is spoken to as before: the Go SDK's (it answers
// server/discover without 2026-07-28 among its versions) and the
// TypeScript SDK 1.x's (it refuses the request with a 2025-era error).
func TestMCPModernFallsBackTo2025(t *testing.T) {
	for name, start := range map[string]func(testing.TB) *mcppeer.Peer{"typescript-sdk": mcppeer.StartTS, "go-sdk": gosdk.Start} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := start(t)
			rec := runPeer(t, p, "", "short", `{"steps":2,"interval_ms":20}`, probe.Drill{}, reftest.RunDeadline).Record
			if rec.Outcome != probe.Success || rec.ProtocolVersion != "2025-11-25" {
				t.Fatalf("outcome %s (%s) version %q", rec.Outcome, rec.Error, rec.ProtocolVersion)
			}
			var methods []string
			for _, ex := range peerLog(t, p) {
				methods = append(methods, ex.Method+" "+ex.RPC)
			}
			if got := strings.Join(methods, ", "); !strings.HasPrefix(got, "POST server/discover, POST initialize, POST notifications/initialized, POST tools/call") {
				t.Errorf("requests: %s", got)
			}
		})
	}
}

// runTask runs sample on the peer calling the progress tool with args as
// a task, on the protocol version pinned (or asked of the server).
func runTask(t *testing.T, p *mcppeer.Peer, version, sample, args string, d probe.Drill) probe.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	tg := dialect.Target{Name: p.Name, URL: p.URL, Dialect: "mcp", MCPVersion: version,
		Tools: map[string]dialect.ToolCall{sample: {Name: mcppeer.Tool, Args: json.RawMessage(args), Task: true}}}
	return probe.Run(ctx, tg, probe.Options{Sample: dialect.Samples[sample], Client: reftest.NewClient(t), Drill: d}).Record
}

// mark3labs/mcp-go v1.2.1's tasks, on 2026-07-28 and on 2025-11-25: the
// task's tool runs under the creating POST's context and is cancelled as
// soon as the handle is sent (server/server.go:2318, 2446;
// streamable_http.go:719): task_cancelled. A tool with no steps completes
// before its context is looked at; on 2026-07-28 its result is then
// unreachable (tasks/get carries none, mcp/tasks.go:89-94; tasks/result
// is refused as removed, request_handler.go:587-594): result_unreachable.
// On 2025-11-25 tasks/result answers it. An unknown task id is 400 with
// -32602 (server.go:2910-2917): a defined answer.
func TestMCPGoTasks(t *testing.T) {
	t.Parallel()
	p := mcpgo.Start(t, mcpgo.V121)
	for _, tc := range []struct {
		version, args string
		drill         string
		verdict       probe.Verdict
		outcome       probe.Outcome
		detail        string
		status        string
	}{
		{"", `{"steps":3,"interval_ms":30}`, "", probe.VerdictTaskCancelled, probe.UpstreamError, "though the client never asked", "cancelled"},
		{"2025-11-25", `{"steps":3,"interval_ms":30}`, "", probe.VerdictTaskCancelled, probe.UpstreamError, "context canceled", "cancelled"},
		{"", `{"steps":0}`, "", probe.VerdictResultUnreachable, probe.UpstreamError, "tasks/result was refused (HTTP 404", "completed"},
		{"2025-11-25", `{"steps":0}`, "", "", probe.Success, "", "completed"},
		{"", `{"steps":0}`, probe.DrillStale, probe.VerdictStaleOK, probe.Success, "stale task id streamprobe-stale-task-0 answered by http_400", ""},
	} {
		t.Run(cmp.Or(tc.version, "discover")+"/"+tc.args+"/"+tc.drill, func(t *testing.T) {
			rec := runTask(t, p, tc.version, "long", tc.args, probe.Drill{Name: tc.drill})
			if rec.Verdict != tc.verdict || rec.Outcome != tc.outcome || !strings.Contains(rec.ResumeDetail, tc.detail) || rec.Task == nil {
				t.Fatalf("verdict %s outcome %s (%s); detail %q; task %+v", rec.Verdict, rec.Outcome, rec.Error, rec.ResumeDetail, rec.Task)
			}
			if tc.status != "" && rec.Task.Status != tc.status || rec.Task.HandleMs == nil || rec.Task.Polls < 1 {
				t.Errorf("task %+v", *rec.Task)
			}
			if want := cmp.Or(tc.version, "2026-07-28"); rec.ProtocolVersion != want {
				t.Errorf("protocol version %q, want %q", rec.ProtocolVersion, want)
			}
		})
	}
}

// The cancel sample on a task: tasks/cancel at the handle, then the polls
// until the task says cancelled. mcp-go v1.2.1 refuses the cancel (400,
// -32602 "cannot cancel task in terminal status": its own POST's end had
// cancelled the task already, server.go:2446): the record says so.
func TestMCPGoTaskCancelSample(t *testing.T) {
	t.Parallel()
	p := mcpgo.Start(t, mcpgo.V121)
	rec := runTask(t, p, "", "cancel", `{"steps":40,"interval_ms":30}`, probe.Drill{})
	if rec.Outcome != probe.ClientCancelled || !rec.Intended() || rec.CancelEndMs == nil ||
		!strings.Contains(rec.Error, "with tasks/cancel at the task's handle, which the server refused (HTTP 400") || !strings.Contains(rec.Error, "the task said cancelled") {
		t.Fatalf("outcome %s (%s) cancel_end %v", rec.Outcome, rec.Error, reftest.Shown(rec.CancelEndMs))
	}
	var cancels int
	for _, ex := range peerLog(t, p) {
		if ex.RPC == "tasks/cancel" {
			cancels++
			if ex.MCPName == "" || ex.MCPMethod != "tasks/cancel" {
				t.Errorf("tasks/cancel: Mcp-Method %q Mcp-Name %q", ex.MCPMethod, ex.MCPName)
			}
		}
	}
	if cancels != 1 {
		t.Errorf("%d tasks/cancel sent", cancels)
	}
}
